"""IMEX on lattice meshes (solvers/mesh/lattice.py, solvers/equations/lattice_imex.py): the mesh
is recognised only where its cotangent operator is the 5-point one; the cosine-transform solve is
the exact solve of (A + δK) x = A b; model files and the built-in chemotaxis give the results of
the general solvers (LU, CG); on the GPU the whole-step kernels equal the NumPy float64
reference, and their CUDA graphs equal plain steps."""
import numpy as np
import pytest
import scipy.sparse as sp

from pdestudio import solvers
from pdestudio.solvers.mesh import generators
from pdestudio.solvers.mesh.lattice import LatticeSolver, find_lattice
from pdestudio.solvers.mesh.operators import cotan_laplacian
from pdestudio.solvers.mesh.triangles import TriangleMesh

from .test_gpu import _pair

SCHNAKENBERG = {
    "model": {"name": "schnak-lattice"},
    "equations": {"u": "Du*lap(u) + a - u + u^2*v", "v": "Dv*lap(v) + b - u^2*v"},
    "parameters": {"a": 0.1, "b": 0.9, "Du": 0.025, "Dv": 1.0},
    "initial": {"u": "a + b + 0.01*noise", "v": "b/(a + b)^2 + 0.01*noise"},
    "domain": {"kind": "mesh", "surface": "rectangle", "vertices": 3000,
               "boundary": "natural"},
}


# an operator in the explicit part: lap(v) in u's equation
CROSS = {**SCHNAKENBERG, "model": {"name": "schnak-cross"},
         "equations": {**SCHNAKENBERG["equations"],
                       "u": "Du*lap(u) + 0.002*lap(v) + a - u + u^2*v"}}


def _rel(a, b):
    return max(float(np.abs(a.fields()[k] - b.fields()[k]).max()
                     / (np.abs(b.fields()[k]).max() + 1e-300)) for k in b.state)


def test_a_renumbered_rectangle_is_found_and_its_solve_is_exact():
    m = generators.rectangle(2000, width=12.0, height=7.0)
    m = m.permuted(vertex_order=np.random.default_rng(1).permutation(m.n_vertices))
    L = cotan_laplacian(m)
    lat = find_lattice(m, L)
    assert lat is not None and lat.nx * lat.ny == m.n_vertices
    assert lat.hx != lat.hy  # non-square cells
    b = [np.random.default_rng(s).standard_normal(m.n_vertices) for s in (2, 3)]
    xs = LatticeSolver(lat, np, np.float64).solve(b, [0.3, 2.0])
    A = np.asarray(m.mixed_areas)
    K = -sp.diags(A) @ L
    for x, rhs, d in zip(xs, b, (0.3, 2.0)):
        res = (sp.diags(A) + d * K) @ x - A * rhs
        assert np.abs(res).max() < 1e-11 * np.abs(A * rhs).max() * (1 + d * abs(L).max())


@pytest.mark.parametrize("make", [lambda: generators.torus(3000), lambda: generators.sphere(2562),
                                  lambda: generators.tube(3000), lambda: generators.disc(2000)])
def test_other_surfaces_are_not_lattices(make):
    assert find_lattice(make()) is None


def test_a_lattice_with_a_moved_vertex_or_a_hole_is_refused():
    m = generators.rectangle(500)
    for axis, shift in ((2, 1e-3), (0, 0.2)):  # out of the plane; off its column
        pts = np.array(m.points)
        pts[40, axis] += shift
        assert find_lattice(TriangleMesh(pts, m.cells)) is None
    # the coordinates still a lattice, one interior quad removed: the operator is not the
    # 5-point one there (the areas and weights of a boundary around the hole)
    assert find_lattice(TriangleMesh(m.points, np.delete(np.array(m.cells), [200, 201],
                                                         axis=0))) is None
    # either diagonal of a rectangular cell gives the 5-point operator: still a lattice
    cells = np.array(m.cells)
    a, b = cells[0], cells[1]  # (v00, v10, v11), (v00, v11, v01)
    cells[0], cells[1] = [a[0], a[1], b[2]], [a[1], a[2], b[2]]
    assert find_lattice(TriangleMesh(m.points, cells)) is not None


@pytest.mark.parametrize("integrator", ["imex1", "imex3"])
def test_model_file_imex_on_a_lattice_equals_the_lu_solves(integrator):
    mid = solvers.define(SCHNAKENBERG)
    a = solvers.create(mid, backend="numpy", kernel="array", integrator=integrator, dt=0.2)
    b = solvers.create(mid, backend="numpy", kernel="array", integrator=integrator, dt=0.2)
    assert a.scheme.imex.lattice is not None if hasattr(a.scheme, "imex") else True
    imex_b = getattr(b.scheme, "imex", b.scheme)
    imex_b.lattice = None  # the sparse LU of every other mesh
    a.step(30)
    b.step(30)
    assert _rel(a, b) < 1e-11


def test_builtin_chemotaxis_imex_on_a_lattice_equals_cg():
    a = solvers.create("chemotaxis", backend="numpy", integrator="imex", vertices=3000)
    b = solvers.create("chemotaxis", backend="numpy", integrator="imex", vertices=3000)
    assert a.scheme.solver.lattice is not None  # (RCM-renumbered)
    b.scheme.solver.lattice = None
    a.advance(2.0)
    b.advance(2.0)
    assert a.steps == b.steps
    assert _rel(a, b) < 1e-8  # CG's relative tolerance 1e-10


# ---- the GPU -------------------------------------------------------------------------------
def _perturbed_pair(integrator, dtype, **kw):
    """(the NumPy float64 reference, the GPU) from the same perturbed start (test_gpu.py)."""
    return _pair(SCHNAKENBERG, dtype=dtype, integrator=integrator, **kw)


def test_the_transform_runs_along_an_axis_cufft_is_fast_on():
    from pdestudio.solvers.mesh.lattice import smooth, transform_axis
    from pdestudio.solvers.mesh.lattice import Lattice
    lat = lambda nx, ny: Lattice(nx, ny, 1.0, 1.0, np.arange(nx * ny))  # noqa: E731
    assert smooth(630) and not smooth(1264)  # 2·3²·5·7; 2⁴·79
    assert transform_axis(lat(633, 316)) == "y"  # the benchmark's 200,000-vertex rectangle
    assert transform_axis(lat(65, 33)) == "x"
    assert transform_axis(lat(7000, 300)) == "x"  # a system of 7000 rows does not fit a block
    assert transform_axis(lat(300, 7000)) == "y"
    assert transform_axis(lat(80, 40)) == "x"  # neither smooth: no transposes


def _emulate_point_plan(sim, imex, integrator, dt, n):
    """lattice_imex.point_plan's launches run on NumPy as kernels/lattice_stage.cu runs them at
    each node (the solves by the lattice's cosine transforms): n steps from sim's state."""
    from pdestudio.solvers.equations.imex import ARS
    from pdestudio.solvers.equations.lattice_imex import LAT_LAST, LAT_MID, LAT_START, point_plan
    env = imex.rates.env(dict(sim.state), 0.0)
    coef = dict.fromkeys(sim.species, 0.0)
    for s, term in imex.implicit:
        coef[s] += float(imex.rates.ev(term.coef, env))
    start, stages = point_plan(ARS[integrator], dt)
    U = {s: sim.state[s].copy() for s in sim.species}
    E, I, rhs = {}, {}, {}

    def react(Y):
        return imex.rates(Y, 0.0, implicit=imex.implicit)[0]

    def launch(la, Y, more):
        older = lambda s: sum(w * (E if k == "E" else I)[j][s]  # noqa: E731
                              for k, j, w in la["terms"])
        if la["mode"] == LAT_START:
            Y = dict(U)
        if la["mode"] == LAT_LAST:
            if la["cE"] or la["terms"]:
                e = react(Y)
                Y = {s: Y[s] + la["cE"] * e[s] + older(s) for s in sim.species}
            U.update(Y)
            if not more:
                return
        e = react(Y)
        E[la["Eout"]] = e
        if la["mode"] == LAT_MID:
            I[la["Iout"]] = {s: (Y[s] - rhs[s]) * la["inv_gdt"] for s in sim.species}
        for s in sim.species:
            if la["mode"] == LAT_MID:
                rhs[s] = U[s] + la["cE"] * e[s] + la["cI"] * I[la["Iout"]][s] + older(s)
            else:
                rhs[s] = Y[s] + la["cI"] * e[s]

    launch(start, None, True)
    for step in range(n):
        for k, (gdt, la) in enumerate(stages):
            Y = dict(zip(sim.species, imex.lattice.solve([rhs[s] for s in sim.species],
                                                          [gdt * coef[s] for s in sim.species])))
            launch(la, Y, k < len(stages) - 1 or step < n - 1)
    return U


@pytest.mark.parametrize("integrator", ["imex1", "imex", "imex3", "imex443"])
def test_the_fused_stage_plan_on_numpy_equals_the_reference_steps(integrator):
    """The GPU point path's bookkeeping (lattice_imex.point_plan: each stage finished and the
    next packed by one launch, E the reaction at the node, the next step's first stage packed
    by the last stage, ARS(3,4,3)'s explicit weights b̂ − Â at the last) equals imex.py's loop
    over 6 steps, to round-off."""
    from pdestudio.solvers.equations.imex import ImexReference
    from pdestudio.solvers.equations.lattice_imex import pointwise
    mid = solvers.define(SCHNAKENBERG)
    ref = solvers.create(mid, backend="numpy", integrator=integrator, dt=0.15)
    sim = solvers.create(mid, backend="numpy", integrator=integrator, dt=0.15)
    imex = ImexReference(sim)
    assert pointwise(sim, imex) and imex.lattice is not None
    U = _emulate_point_plan(sim, imex, integrator, 0.15, 6)
    ref.step(6)
    for s in ref.state:
        scale = np.abs(ref.state[s]).max()
        assert np.abs(U[s] - ref.state[s]).max() < 1e-12 * scale, s
    # and the plan moved the state: not the start
    assert max(np.abs(U[s] - sim.state[s]).max() for s in U) > 1e-3


def test_a_cross_diffusion_term_keeps_the_rates_kernel_path():
    """An operator left in the explicit part (lap(v) in u's equation) is not pointwise: the
    lattice step keeps the generated rates kernel (GPU test below)."""
    from pdestudio.solvers.equations.imex import ImexReference
    from pdestudio.solvers.equations.lattice_imex import pointwise
    sim = solvers.create(solvers.define(CROSS), backend="numpy", integrator="imex3")
    assert not pointwise(sim, ImexReference(sim))


@pytest.mark.gpu
@pytest.mark.parametrize("axis", ["x", "y"])
@pytest.mark.parametrize("integrator", ["imex1", "imex", "imex3", "imex443"])
def test_gpu_lattice_step_matches_the_reference_float64(integrator, axis, monkeypatch):
    monkeypatch.setenv("PDESTUDIO_LATTICE_AXIS", axis)
    ref, gpu = _perturbed_pair(integrator, "float64", dt=0.15)
    assert gpu.scheme.lattice_imex.point
    assert gpu.scheme.lattice_why is None, gpu.scheme.lattice_why
    assert gpu.scheme.lattice_imex.axis == axis
    ref.step(20)
    gpu.step(20)
    assert gpu.t == pytest.approx(ref.t, rel=1e-14)
    assert _rel(gpu, ref) < 1e-11


@pytest.mark.gpu
@pytest.mark.parametrize("axis", ["x", "y"])
def test_gpu_lattice_step_float32_matches_to_its_precision(axis, monkeypatch):
    monkeypatch.setenv("PDESTUDIO_LATTICE_AXIS", axis)
    ref, gpu = _perturbed_pair("imex3", "float32", dt=0.15)
    assert gpu.scheme.lattice_why is None
    ref.step(20)
    gpu.step(20)
    assert _rel(gpu, ref) < 2e-4


@pytest.mark.gpu
@pytest.mark.parametrize("axis", ["x", "y"])
def test_gpu_lattice_graphs_equal_plain_steps_and_follow_live_parameters(axis, monkeypatch):
    monkeypatch.setenv("PDESTUDIO_LATTICE_AXIS", axis)
    ref, gpu = _perturbed_pair("imex3", "float64", dt=0.1)
    plain = solvers.create(solvers.define(SCHNAKENBERG), backend="cupy", integrator="imex3",
                           dt=0.1)
    for s in gpu.state:
        plain.set_field(s, gpu.fields()[s])
    gpu.step(200)  # three graphs of 64 and single steps
    for _ in range(200):
        plain.step(1)
    assert gpu.steps == plain.steps == 200
    assert _rel(gpu, plain) < 1e-13
    assert gpu.scheme._graphs is not None and gpu.scheme._graphs.failed is None
    # a live change of a diffusivity reaches the captured steps
    for s in gpu.state:
        ref.set_field(s, gpu.fields()[s])
    gpu.set_param("Dv", 0.5)
    ref.set_param("Dv", 0.5)
    gpu.step(128)  # two graphs
    ref.step(128)
    assert _rel(gpu, ref) < 1e-10


@pytest.mark.gpu
@pytest.mark.parametrize("model", ["schnakenberg", "cross"])
def test_gpu_a_graph_replays_after_a_short_step_and_a_parameter_round_trip(model):
    """A captured graph holds the addresses of the launches' pointer tables: after a step of
    another dt (the last one onto an end time) and a parameter changed and changed back, the
    first graph replays and still equals the reference (the stage-kernel path; the rates-kernel
    path with imex443)."""
    src, integrator = (SCHNAKENBERG, "imex3") if model == "schnakenberg" else (CROSS, "imex443")
    ref, gpu = _pair(src, dtype="float64", integrator=integrator, dt=0.1)
    assert gpu.scheme.lattice_why is None
    for sim in (ref, gpu):
        sim.step(64)  # a graph
        sim.advance(sim.t + 0.05)  # one step of 0.05
        sim.set_param("Dv", 0.5)
        sim.step(64)  # another graph
        sim.set_param("Dv", 1.0)
        sim.step(64)  # the first graph again
    assert gpu.steps == ref.steps == 193
    assert gpu.scheme._graphs is not None and gpu.scheme._graphs.failed is None
    assert _rel(gpu, ref) < 1e-10


@pytest.mark.gpu
@pytest.mark.parametrize("integrator", ["imex443", "imex3"])
def test_gpu_an_explicit_operator_takes_the_rates_kernel_or_the_array_path(integrator):
    """With lap(v) in u's equation: ARS(4,4,3) runs the lattice step with the generated rates
    kernel; ARS(3,4,3) (its last stage not the state) is refused with the reason and runs
    imex.py on CuPy. Both equal the NumPy float64 reference."""
    ref, gpu = _pair(CROSS, dtype="float64", integrator=integrator, dt=0.15)
    if integrator == "imex443":
        assert gpu.scheme.lattice_why is None and not gpu.scheme.lattice_imex.point
    else:
        assert "explicit part" in gpu.scheme.lattice_why
    ref.step(20)
    gpu.step(20)
    assert _rel(gpu, ref) < 1e-11


@pytest.mark.gpu
def test_gpu_builtin_imex_uses_the_lattice_solve_and_equals_numpy():
    """The built-in models' IMEX on the rectangle: gray-scott's array path solves by the
    lattice's transforms, chemotaxis' whole step is fused (solvers/surface_rd/lattice_imex.py;
    tests/solvers/surface_rd/test_imex.py tests it further)."""
    b = solvers.create("gray-scott", backend="cupy", integrator="imex", vertices=3000)
    assert b.scheme.solver.lattice is not None
    a = solvers.create("chemotaxis", backend="numpy", integrator="imex", vertices=3000)
    b = solvers.create("chemotaxis", backend="cupy", integrator="imex", vertices=3000)
    assert b.scheme.lattice_why is None
    a.advance(2.0)
    b.advance(2.0)
    assert a.steps == b.steps
    assert _rel(b, a) < 1e-10
