"""Shared test set-up: the `gpu` marker skips with a reason where no CUDA device works."""
import pytest

from pdestudio import solvers
def pytest_collection_modifyitems(config, items):
    # the files with long tests first (the packaging builds before the rest): run on several
    # cores (.ci/run: pytest-xdist, whole files to a worker) they overlap the short ones instead
    # of ending the run alone; the order is the same in every worker
    slow = {item.path for item in items if "slow" in item.keywords}
    items.sort(key=lambda item: (0 if "packaging" in item.path.parts else 1,
                                 0 if item.path in slow else 1))
    ok, why = solvers.gpu_status()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def gpu_backend():
    """Name of the GPU backend for tests marked gpu."""
    return "cupy"


@pytest.fixture(autouse=True)
def _forget_defined_models():
    """Model files a test defines (solvers.define) leave the registry with the test: the next
    test sees the built-in models alone, as a fresh process does."""
    from pdestudio.solvers.core import registry
    before = set(solvers.available_models())
    yield
    for model in set(solvers.available_models()) - before:
        registry.unregister(model)
