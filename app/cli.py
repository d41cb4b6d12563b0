"""The `pdestudio` command's entry point (pyproject: `pdestudio.app.cli:main`).

`pdestudio --version` is answered here, before anything heavy is imported (the solvers import
NumPy, SciPy and every model: seconds on a cold disk); everything else is cli_main.py.
"""
from __future__ import annotations

import sys

# options that may stand before --version without changing its answer
_HARMLESS = ("-v", "--verbose", "-q", "--quiet", "-vv", "-qq")


def _version_only(args) -> bool:
    """`pdestudio [-v|-q ...] --version ...`: argparse would print the version and exit there."""
    for arg in args:
        if arg == "--version":
            return True
        if arg not in _HARMLESS:
            return False
    return False


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if _version_only(args):
        import pdestudio
        sys.stdout.write(f"pdestudio {pdestudio.__version__}\n")
        return 0
    from .cli_main import main as full_main
    return full_main(args)


def __getattr__(name):  # parser, display_problem, ...: the full command line, on first use
    if name.startswith("__"):  # the import system probes __path__ etc.: not ours to load
        raise AttributeError(name)
    from . import cli_main
    return getattr(cli_main, name)


if __name__ == "__main__":
    sys.exit(main())
