"""The decomposition layer in one process (core/decomp.py): the split, the refusals with their
reasons, and a one-rank decomposed run equal to the plain run. The runs over MPI ranks are in
test_decomp_mpi.py."""
from __future__ import annotations

import numpy as np
import pytest

from pdestudio import solvers
from pdestudio.solvers.core import decomp
from pdestudio.solvers.core.decomp_comm import SelfComm


class OneOfMany(SelfComm):
    """Rank 0 of a world of `size` ranks that never talks (enough for what is refused before
    the first exchange)."""

    def __init__(self, size):
        self.size = size


@pytest.mark.parametrize("n,parts", [(29, 4), (8, 8), (1024, 3), (7, 2)])
def test_split_rows_covers_the_grid_in_balanced_strips(n, parts):
    b = decomp.split_rows(n, parts)
    sizes = [s1 - s0 for s0, s1 in b]
    assert b[0][0] == 0 and b[-1][1] == n and all(b[i][1] == b[i + 1][0] for i in range(parts - 1))
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("order,dtype", [(1, "float64"), (3, "float32")])
def test_one_rank_decomposed_equals_the_plain_run(order, dtype):
    kw = dict(backend="numpy", dtype=dtype, order=order, nx=21, ny=17)
    plain = solvers.create("shallow-water", **kw)
    dist = solvers.create("shallow-water", comm=SelfComm(), **kw)
    for s in (plain, dist):
        s.advance(0.3)
    assert dist.steps == plain.steps > 5 and dist.t == plain.t
    for k in ("h", "hu", "hv"):
        assert np.array_equal(dist.fields()[k], plain.fields()[k])
    assert dist.domain.describe()["rows"] == [17] and "decomposed over 1 ranks" in dist.notes()[0]
    whole = dist.gathered()
    assert whole.steps == plain.steps and np.array_equal(whole.fields()["h"], plain.fields()["h"])


def test_a_model_without_a_split_is_refused_by_name():
    with pytest.raises(solvers.ParameterError, match="'gray-scott' cannot run decomposed.*"
                       "models that can: mean-curvature, willmore, shallow-water"):
        solvers.create("gray-scott", backend="numpy", comm=SelfComm())


def test_triangles_are_refused():
    with pytest.raises(solvers.ParameterError, match="geometry=triangles is not decomposed"):
        solvers.create("shallow-water", backend="numpy", comm=SelfComm(), geometry="triangles",
                       cells=200)


def test_more_ranks_than_the_stencil_allows_is_refused():
    with pytest.raises(solvers.ParameterError, match=r"20 ranks split ny = 29 rows into strips "
                       r"of 1; this scheme reads 2 rows.*at most 14 ranks"):
        solvers.create("shallow-water", backend="numpy", comm=OneOfMany(20), order=3, nx=37,
                       ny=29)


def test_a_strip_is_built_from_its_own_rows_only():
    """The model evaluates its scenario on the strip's rows (what a grid too large for one
    process needs), and set_field takes the whole field and keeps the strip's rows."""
    dist = solvers.create("shallow-water", backend="numpy", comm=OneOfMany(3), nx=12, ny=10)
    plain = solvers.create("shallow-water", backend="numpy", nx=12, ny=10)
    assert dist.domain.rows == slice(0, 4) and dist.state["h"].shape == (4, 12)
    assert np.array_equal(dist.state["h"], plain.state["h"][:4])
    assert dist.field_shape("hu") == (10, 12)
    values = np.arange(120.0).reshape(10, 12)
    dist.set_field("hu", values)
    assert np.array_equal(dist.state["hu"], values[:4])
