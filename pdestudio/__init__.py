"""pdestudio: live GPU PDE solvers on grids and surfaces (a Python library and a desktop app).

One import name with three sub-packages: `pdestudio.solvers` (the numerical library, no Qt;
`from pdestudio import solvers`), `pdestudio.app` (the window and the `pdestudio` command line)
and `pdestudio.resources` (icons, sample meshes and initial conditions). In the repository they
are the top-level folders solvers/, app/ and resources/; the wheel installs them under
pdestudio/ (setup.py maps them). In a source checkout used without installing (PYTHONPATH set to
the checkout), the repository root joins this package's search path so that the same names work.
"""
from pathlib import Path as _Path

__version__ = "0.2.0"
__all__ = ["__version__"]

_here = _Path(__file__).resolve().parent
if not (_here / "solvers").is_dir():  # a source checkout: the sub-packages sit beside this folder
    __path__.append(str(_here.parent))  # noqa: F821  (the package's own __path__)
del _Path, _here
