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
