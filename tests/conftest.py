"""Shared test set-up: the `gpu` marker skips with a reason where no CUDA device works."""
import pytest

from pdestudio import solvers
def pytest_collection_modifyitems(config, items):
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
