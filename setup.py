"""The package layout behind pyproject.toml: the repository's top-level folders solvers/, app/
and resources/ install as pdestudio.solvers, pdestudio.app and pdestudio.resources, so the wheel
holds one top-level import package, `pdestudio`. Everything else is in pyproject.toml."""
from setuptools import find_namespace_packages, setup

ROOTS = ("solvers", "app", "resources")
packages = ["pdestudio"] + [
    f"pdestudio.{name}" for name in find_namespace_packages(
        include=[f"{r}" for r in ROOTS] + [f"{r}.*" for r in ROOTS],
        exclude=["*.__pycache__"])]
setup(packages=packages,
      package_dir={"pdestudio": "pdestudio", **{f"pdestudio.{r}": r for r in ROOTS}})
