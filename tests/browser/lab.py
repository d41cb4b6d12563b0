"""The browser test's harness: a JupyterLab server on 127.0.0.1 (a random port, a token, its own
settings and workspace folders in a temporary folder) and a page of it in headless Chromium
driven by Selenium. JupyterLab runs with `expose_app_in_browser`, so the page's own application
object (`window.jupyterapp`) runs the notebook's commands (Run All, insert and run a cell) the way
the menu does; everything the test checks is read back from the page (the DOM, the canvas's
image, the cells' printed output)."""
import base64
import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

# settings that keep pop-ups (news, update checks) off the page and every cell in the DOM
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """`python -m jupyterlab` serving `folder`; `url(path)` is a page address with the token."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.token = folder, free_port(), secrets.token_hex(16)
        home = folder / ".lab"
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(home / "config"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"),
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        for name, value in SETTINGS.items():
            path = home / "settings" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        self.log_path = home / "server.log"
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
             f"--port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={folder}",
             "--LabApp.expose_app_in_browser=True", "--allow-root"],
            cwd=folder, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(self.url("api/status"), timeout=2):
                    return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    tail = self.log_tail()
                    self.stop()
                    raise RuntimeError(f"JupyterLab did not start:\n{tail}")
                time.sleep(0.5)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}?token={self.token}"

    def log_tail(self, n=3000):
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")[-n:]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def start_chromium(width=1400, height=1200):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--disable-extensions",
                "--no-first-run", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_script_timeout(120)
    return driver


# Runs an async body in the page; the Python side gets {"ok": value} or {"error": text}.
_ASYNC = """const done = arguments[arguments.length - 1];
const args = Array.prototype.slice.call(arguments, 0, -1);
(async (...args) => { %s })(...args).then(v => done({ok: v === undefined ? null : v}),
                                          e => done({error: String(e && e.stack || e)}));"""


class LabPage:
    """A notebook opened in JupyterLab in the browser."""

    def __init__(self, driver, server: LabServer, shots: Path):
        self.driver, self.server, self.shots = driver, server, shots
        self.shots.mkdir(parents=True, exist_ok=True)

    # page plumbing --------------------------------------------------------------------------
    def js(self, body, *args):
        reply = self.driver.execute_async_script(_ASYNC % body, *args)
        if "error" in reply:
            raise RuntimeError(f"in the page: {reply['error']}")
        return reply["ok"]

    def wait(self, what, predicate, timeout=60, every=0.25):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value.size > 0 if isinstance(value, np.ndarray) else value:
                return value
            if time.monotonic() > deadline:
                self.shot("timeout")
                raise TimeoutError(f"waited {timeout} s for {what}{self._tracebacks()}; "
                                   f"server log:\n{self.server.log_tail(1500)}")
            time.sleep(every)

    def shot(self, name, show=".pdestudio-live"):
        """Save a screenshot of the page with the element `show` scrolled to the top."""
        self.driver.execute_script(
            "const e = document.querySelector(arguments[0]);"
            "if (e) e.scrollIntoView({block: 'start'});", show)
        path = self.shots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    # the notebook ---------------------------------------------------------------------------
    def open(self, name):
        # reset: a fresh workspace, not the notebooks an earlier test left open
        self.driver.get(self.server.url(f"lab/tree/{name}") + "&reset")
        self.wait("the notebook and an idle kernel", lambda: self.js(
            """const w = window.jupyterapp && jupyterapp.shell.currentWidget;
            if (!w || !w.context || w.context.path !== args[0] || !w.content) return false;
            const k = w.sessionContext.session && w.sessionContext.session.kernel;
            return !!k && k.status === 'idle' && w.content.widgets.length > 0;""", name),
            timeout=120, every=0.5)
        self.js("jupyterapp.shell.collapseLeft();")

    def _tracebacks(self):
        """Tracebacks the page shows in cell outputs (a widget's callbacks print theirs into
        its cell's output), for the message of a failed wait."""
        try:
            texts = [c["text"] for c in self._cells() if "Traceback" in c["text"]]
        except Exception:  # the page itself is gone: nothing more to say
            return ""
        return "".join(f"\n--- a traceback in the page:\n{t[-2500:]}" for t in texts)

    def shutdown_kernel(self):
        self.js("await jupyterapp.shell.currentWidget.sessionContext.shutdown();")

    def _cells(self):
        return self.js("""const nb = jupyterapp.shell.currentWidget.content;
            return nb.widgets.map(c => ({id: c.model.id, type: c.model.type,
                prompt: c.node.querySelector('.jp-InputPrompt') ?
                        c.node.querySelector('.jp-InputPrompt').innerText : '',
                count: c.model.type === 'code' ? c.model.executionCount : 0,
                text: c.model.type === 'code' ? c.outputArea.node.innerText : '',
                error: !!c.node.querySelector(
                    '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
                    && c.outputArea.node.innerText.includes('Traceback')}));""")

    def _idle(self):
        return self.js("""const k = jupyterapp.shell.currentWidget.sessionContext.session.kernel;
            return k.status;""") == "idle"

    def _settled(self, ids=None):
        cells = [c for c in self._cells() if c["type"] == "code"
                 and (ids is None or c["id"] in ids)]
        for c in cells:
            if c["error"]:
                raise AssertionError(f"a cell failed in the page:\n{c['text'][-3000:]}")
        done = all(c["count"] and "*" not in c["prompt"] for c in cells)
        return done and self._idle() and cells

    def run_all(self, timeout=180):
        """JupyterLab's Run All (the command behind Run ▸ Run All Cells), then wait until every
        code cell has its execution number and the kernel is idle."""
        self.js("await jupyterapp.commands.execute('notebook:run-all-cells');")
        return self.wait("Run All to finish", self._settled, timeout=timeout, every=0.5)

    def run_cell(self, code, timeout=120):
        """Append a code cell with `code`, run it from the page and return its output text."""
        cid = self.js("""const nb = jupyterapp.shell.currentWidget.content;
            nb.activeCellIndex = nb.widgets.length - 1;
            await jupyterapp.commands.execute('notebook:insert-cell-below');
            await jupyterapp.commands.execute('notebook:change-cell-to-code');
            const cell = nb.activeCell;
            cell.model.sharedModel.setSource(args[0]);
            await jupyterapp.commands.execute('notebook:run-cell');
            return cell.model.id;""", code)
        cells = self.wait(f"the cell {code.splitlines()[0]!r}",
                          lambda: self._settled({cid}), timeout=timeout)
        return cells[0]["text"]

    def run_json(self, code, timeout=120):
        """Run `code` whose last line prints one JSON document and return it."""
        text = self.run_cell(code, timeout)
        return json.loads(text.strip().splitlines()[-1])

    # the canvas -----------------------------------------------------------------------------
    CANVAS = ".pdestudio-canvas img"

    def element(self, css):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def canvas_pixels(self):
        """The picture the canvas's <img> shows now, decoded by the page (RGB, natural size)."""
        url = self.js("""const img = document.querySelector(args[0]);
            if (!img || !img.complete || !img.naturalWidth) return null;
            const c = document.createElement('canvas');
            c.width = img.naturalWidth; c.height = img.naturalHeight;
            c.getContext('2d').drawImage(img, 0, 0);
            return c.toDataURL('image/png');""", self.CANVAS)
        if url is None:
            return None
        from PIL import Image
        png = base64.b64decode(url.split(",", 1)[1])
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)

    def count_frames(self, seconds):
        """Frames reaching the page in `seconds`: loads of the canvas's <img> and how many of
        them differ from the one before (a hash of the decoded pixels)."""
        return self.js("""const img = document.querySelector(args[0]);
            // jupyter_rfb draws only while the canvas is on screen
            img.scrollIntoView({block: 'center'});
            await new Promise(r => setTimeout(r, 1000));
            const c = document.createElement('canvas');
            const g = c.getContext('2d', {willReadFrequently: true});
            let loads = 0, distinct = 0, last = null;
            const onload = () => {
                loads += 1;
                c.width = img.naturalWidth; c.height = img.naturalHeight;
                g.drawImage(img, 0, 0);
                const d = g.getImageData(0, 0, c.width, c.height).data;
                let h = 0;
                for (let i = 0; i < d.length; i += 3) h = (Math.imul(h, 31) + d[i]) | 0;
                if (h !== last) { distinct += 1; last = h; }
            };
            img.addEventListener('load', onload);
            const t0 = performance.now();
            await new Promise(r => setTimeout(r, args[1] * 1000));
            img.removeEventListener('load', onload);
            const dt = (performance.now() - t0) / 1000;
            return {loads: loads, distinct: distinct, seconds: dt,
                    width: img.naturalWidth, height: img.naturalHeight};""",
                       self.CANVAS, seconds)
