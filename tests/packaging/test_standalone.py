"""The stand-alone PyInstaller build starts, runs every model headless, and refuses bad input.

Slow (about two minutes): runs packaging/build.sh, which builds the one-folder app and smoke-tests
it (including a window screenshot under Xvfb when xvfb-run is available)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_standalone_build_runs(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("needs bash")
    r = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh"), str(tmp_path / "dist")],
                       capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "stand-alone build OK" in r.stdout
    assert (tmp_path / "dist" / "pdestudio" / "pdestudio").exists()
