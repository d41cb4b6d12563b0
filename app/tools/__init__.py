"""The window's tools beyond the basic controls (issue 17/19): each module has an
`install(window)` that adds its actions to `window.menus` ("File", "View", "Tools", "Help"), its
docks and its toolbar entries, and reaches the Simulation only through worker commands
(`window.worker.submit("call", fn, *args)` runs `fn(worker, *args)` in the solver thread).
"""
from __future__ import annotations

INSTALLERS: list = ["gallery:install", "sweep_gallery:install", "sessions:install",
                    "timeline:install", "plots:install", "compare:install",
                    "brush:install"]  # "module:function", installed in this order


def install_all(window) -> None:
    import importlib
    for entry in INSTALLERS:
        mod, fn = entry.split(":")
        getattr(importlib.import_module(f"{__name__}.{mod}"), fn)(window)
