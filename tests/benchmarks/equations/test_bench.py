"""benchmarks/equations/bench.py --quick on NumPy: every row is produced with finite positive
rates, the model file's Gray–Scott keeps pace with the built-in on the same surface, and the
IMEX rows take far fewer steps than explicit while staying close to the half-step run."""
import math

import pytest

from benchmarks.equations import bench
from pdestudio.solvers.core import registry


@pytest.fixture(autouse=True)
def _forget_defined_models():
    """The script defines model files: later tests must not see them."""
    registry.discover()
    before = set(registry._MODELS)
    yield
    for m in set(registry._MODELS) - before:
        registry.unregister(m)


def test_quick_rows():
    rows = {r["row"].split(" ")[0] + " " + r["row"].split(" ")[1]: r
            for r in bench.main(["--quick", "--backend", "numpy", "--no-py-pde"])}
    # the model file's Schnakenberg runs imex3 (the bench's default), the built-in chemotaxis imex
    assert {"gs surface", "gs grid", "bruss 32^2", "imex3 schnakenberg", "imex chemotaxis"} \
        <= set(rows)
    for r in rows.values():
        for k, v in r.items():
            if k.endswith("steps_s"):
                assert math.isfinite(v) and v > 0, (r["row"], k)
    assert rows["gs surface"]["ratio"] > 0.5  # generated vs hand-written (NumPy: array code)
    for name in ("imex3 schnakenberg", "imex chemotaxis"):
        r = rows[name]
        assert r["step_ratio"] > 10, r
        assert r["rel_l2_vs_half_step"] < 0.05, r
