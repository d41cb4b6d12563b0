"""Fixtures of the browser tests (marker `browser`): skip with the reason where Chromium, its
driver or the notebook extras are missing; a JupyterLab server and a headless Chromium page per
test module, in a temporary folder the test prints (its screenshots are the artefacts)."""
import shutil

import pytest

NEEDS = ("selenium", "jupyterlab", "jupyter_rfb", "ipywidgets", "ipykernel", "PIL")


def pytest_collection_modifyitems(config, items):
    missing = [f"the program {p}" for p in ("chromium", "chromedriver") if not shutil.which(p)]
    for name in NEEDS:
        try:
            __import__(name)
        except ImportError:
            missing.append(f"the Python package {name}")
    if not missing:
        return
    skip = pytest.mark.skip(reason="browser test needs " + ", ".join(missing) +
                            " (apt-get install chromium chromium-driver; "
                            "pip install -e '.[dev,notebook]')")
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def lab_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    print(f"\nbrowser test folder (notebooks, server log, screenshots): {folder}")
    return folder


@pytest.fixture(scope="module")
def lab(lab_folder):
    from .lab import LabServer
    server = LabServer(lab_folder)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def page(lab, lab_folder):
    from .lab import LabPage, start_chromium
    driver = start_chromium()
    try:
        yield LabPage(driver, lab, lab_folder / "screenshots")
    finally:
        driver.quit()
