"""pdestudio: live GPU PDE solvers on grids and surfaces (a Python library and a desktop app).

One import name with three sub-packages: `pdestudio.solvers` (the numerical library, no Qt;
`from pdestudio import solvers`), `pdestudio.app` (the window and the `pdestudio` command line)
and `pdestudio.resources` (icons, sample meshes and initial conditions). In the repository they
are the top-level folders solvers/, app/ and resources/; the wheel installs them under
pdestudio/ (setup.py maps them). In a checkout, pdestudio/solvers, pdestudio/app and
pdestudio/resources are symbolic links to those folders, so a checkout on PYTHONPATH and tools
that walk the package tree (import-linter) see the installed layout.

`pdestudio.show(obj)` draws a simulation, an ensemble or a sweep folder live in Jupyter
(docs/NOTEBOOK.md; the optional extra `pdestudio[notebook]`). It imports nothing until called,
so `import pdestudio` stays as fast as without it.
"""
__version__ = "0.2.0"
__all__ = ["__version__", "show"]


def show(obj, **options):
    """A live notebook widget for a Simulation, an ensemble or a sweep folder (see
    pdestudio.app.notebook.show)."""
    from .app.notebook import show as _show
    return _show(obj, **options)
