"""benchmarks/surface_rd/sensitivity.py on the CPU: a 1e-10 perturbation of the initial state is
still ~1e-10 early on (the linear phase: the runs are otherwise identical), and the IMEX run at
20x the explicit step stays within 2 % of the explicit one there."""
from benchmarks.surface_rd import sensitivity


def test_sensitivity_rows_on_the_cpu():
    rows = sensitivity.main(["--backend", "numpy", "--vertices", "1500", "--factor", "20",
                             "--times", "4,8", "--cost-steps", "0"])
    assert [r["t"] for r in rows] == [4.0, 8.0]
    for r in rows:
        assert 1e-12 < r["explicit_vs_perturbed"] < 1e-9
        assert r["imex_vs_explicit"] < 0.02
        assert r["imex_steps"] * 5 < r["explicit_steps"]
