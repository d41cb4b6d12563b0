"""The notebook widget driven from Python, without a browser or a kernel: jupyter_rfb's
`get_frame()` (what it calls when the browser is ready) gives the picture, pointer events go in
through its `handle_event`. Skipped where the notebook extra is not installed."""
import pytest

pytest.importorskip("jupyter_rfb", reason="the notebook extra is not installed "
                                          "(pip install 'pdestudio[notebook]')")
pytest.importorskip("ipywidgets", reason="the notebook extra is not installed")


@pytest.fixture
def views():
    """Close every view a test opened (their solver threads stop)."""
    made = []
    yield made
    for v in made:
        v.close()
