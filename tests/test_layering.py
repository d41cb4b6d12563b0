"""The architecture holds: import-linter's contracts (pyproject.toml) are kept, no module of the
package is over 600 lines, and every model family has the same files for the same roles."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAMILY_FILES = ("__init__.py", "model.py", "scenarios.py", "reference.py", "fused.py")
GEOMETRIES = {"shallow_water": ("grid", "triangles")}


def test_import_contracts_are_kept():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.fail("lint-imports is missing: install the dev extras (pip install -e '.[dev]')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    kept = int(r.stdout.split("Contracts:")[1].split("kept")[0])
    assert kept >= 4, r.stdout[-2000:]


def test_no_module_over_600_lines():
    """Python modules and the CUDA sources (.cu, .cuh) alike."""
    long = []
    for folder in ("solvers", "app", "pdestudio"):
        for f in (p for ext in ("*.py", "*.cu", "*.cuh") for p in (ROOT / folder).rglob(ext)):
            if "__pycache__" not in f.parts and not f.is_symlink():
                n = len(f.read_text().splitlines())
                if n > 600:
                    long.append(f"{f.relative_to(ROOT)}: {n} lines")
    assert not long, long


def _families():
    return sorted(p.name for p in (ROOT / "solvers").iterdir()
                  if p.is_dir() and p.name not in ("core", "mesh", "__pycache__")
                  and (p / "__init__.py").exists())


@pytest.mark.parametrize("family", _families())
def test_every_family_has_the_same_layout(family):
    """model.py, scenarios.py, reference.py, fused.py, kernels/ (per geometry where a family runs
    on several), and no measurement script inside the package."""
    base = ROOT / "solvers" / family
    for name in ("__init__.py", "model.py", "scenarios.py"):
        assert (base / name).is_file(), f"{family}/{name}"
    parts = [base / g for g in GEOMETRIES.get(family, ())] or [base]
    for part in parts:
        for name in ("reference.py", "fused.py"):
            assert (part / name).is_file(), f"{part.relative_to(ROOT)}/{name}"
        assert list((part / "kernels").glob("*.cu")), f"{part.relative_to(ROOT)}/kernels/*.cu"
    stray = [f.name for f in base.rglob("*") if f.suffix in (".cu", ".cuh")
             and f.parent.name != "kernels"]
    assert not stray, f"CUDA sources outside kernels/: {stray}"
    scripts = [f.name for f in base.rglob("*.py") if f.name.startswith(("bench", "timing",
               "phases", "ladder", "sweep_bench", "validate", "tri_bench")) or f.suffix == ".sh"]
    assert not scripts, f"measurement scripts belong in benchmarks/{family}/: {scripts}"


def test_benchmarks_say_why_they_import_internals():
    """A benchmark script uses the public API, or its docstring says what it imports beyond it
    and why ('Beyond the public API it imports ...')."""
    import ast
    silent = []
    for f in (ROOT / "benchmarks").rglob("*.py"):
        tree = ast.parse(f.read_text())
        internal = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and (n.module or "").startswith("pdestudio.solvers.")]
        doc = ast.get_docstring(tree) or ""
        if internal and "Beyond the public API" not in doc:
            silent.append(f"{f.relative_to(ROOT)}: {sorted(set(internal))}")
    assert not silent, silent
