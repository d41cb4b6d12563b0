"""The live view's ipywidgets, built from the simulation's schema (nothing about a model is
hard-coded): Run/Pause/Step, field, view and colour-map choice, one slider per numeric
parameter (live ones apply while running; the others show the value the simulation was
created with), the brush bar and the profiler line. Each carries the DOM class the browser
test looks for (docs/NOTEBOOK.md)."""
from __future__ import annotations

import math

import ipywidgets as w

from ..views import COLORMAPS, RANGE_MODES
from ..widgets.spans import span

LAYOUT_BUTTON = {"width": "72px"}


def button(text: str, cls: str, tip: str) -> w.Button:
    b = w.Button(description=text, tooltip=tip, layout=LAYOUT_BUTTON)
    b.add_class(cls)
    return b


def dropdown(options, value, cls: str, tip: str, width: str = "150px") -> w.Dropdown:
    d = w.Dropdown(options=list(options), value=value, tooltip=tip,
                   layout={"width": width})
    d.add_class(cls)
    return d


def slider(p: dict, value):
    """An ipywidgets slider over the parameter's span (widgets/spans.py, as the window's), or
    None where the parameter has none (choices, strings, an empty range)."""
    s = span(p, value)
    if s is None:
        return None
    lo, hi, log = s
    live = bool(p.get("live"))
    unit = f" [{p['unit']}]" if p.get("unit") else ""
    tip = (f"{p['name']}{unit}: {p.get('help', '')} ({lo:.4g} … {hi:.4g}"
           + (", log scale" if log else "") + ("; live: applies while running)" if live else
                                                "; set when the simulation is created)"))
    common = dict(description=p["name"], tooltip=tip, continuous_update=False,
                  disabled=not live, style={"description_width": "70px"},
                  layout={"width": "420px"})
    v = value if value is not None else p.get("default")
    if v is None:  # chosen by the model (an automatic step size): the slider sets one
        v = lo
        common["description"] += " (auto)"
    if p["type"] == "int":
        sl = w.IntSlider(min=int(math.ceil(lo)), max=int(math.floor(hi)),
                         value=int(min(max(int(v), math.ceil(lo)), math.floor(hi))), **common)
    elif log:
        sl = w.FloatLogSlider(base=10, min=math.log10(lo), max=math.log10(hi),
                              step=(math.log10(hi) - math.log10(lo)) / 1000,
                              value=min(max(float(v), lo), hi), readout_format=".4g", **common)
    else:
        sl = w.FloatSlider(min=lo, max=hi, step=(hi - lo) / 1000,
                           value=min(max(float(v), lo), hi), readout_format=".4g", **common)
    sl.add_class(f"pdestudio-param-{p['name']}")
    return sl


class Controls:
    """Every widget of a live view but the canvas (the view wires their callbacks)."""

    def __init__(self, schema: dict, params: dict):
        self.run = button("Run", "pdestudio-run", "Run the solver in its thread")
        self.pause = button("Pause", "pdestudio-pause", "Pause the solver")
        self.step = button("Step", "pdestudio-step", "One time step")
        self.field = dropdown([schema["default_field"]], schema["default_field"],
                              "pdestudio-field", "Field shown")
        self.mode = dropdown(["-"], "-", "pdestudio-mode", "View (by mesh kind)", "110px")
        self.cmap = dropdown(COLORMAPS, "viridis", "pdestudio-cmap", "Colour map", "110px")
        self.range = dropdown(RANGE_MODES, "auto", "pdestudio-range",
                              "Colour range: auto (data min..max), symmetric (-max|v|..max|v|)",
                              "110px")
        self.sliders = {}
        for p in schema["parameters"]:
            sl = slider(p, params.get(p["name"]))
            if sl is not None:
                self.sliders[p["name"]] = sl
        self.brush = w.ToggleButton(description="Brush", value=False, layout=LAYOUT_BUTTON,
                                    tooltip="While on, a drag on the picture paints the field")
        self.brush.add_class("pdestudio-brush")
        self.brush_field = dropdown(["-"], "-", "pdestudio-brush-field", "Field painted", "90px")
        self.brush_value = w.FloatText(value=1.0, description="value",
                                       style={"description_width": "40px"},
                                       layout={"width": "130px"})
        self.brush_radius = w.FloatText(value=1.0, description="radius",
                                        style={"description_width": "40px"},
                                        layout={"width": "130px"})
        self.brush_mode = dropdown(["set", "add"], "set", "pdestudio-brush-mode",
                                   "set: the value; add: plus the value", "70px")
        self.undo = button("Undo", "pdestudio-undo", "Undo the last brush stroke")
        self.profiler = w.HTML("steps/s: –   frames/s: –")
        self.profiler.add_class("pdestudio-profiler")
        self.status = w.HTML("")
        self.status.add_class("pdestudio-status")

    def rows(self, canvas_widget) -> list:
        bar = w.HBox([self.run, self.pause, self.step, self.field, self.mode, self.cmap,
                      self.range])
        brush = w.HBox([self.brush, self.brush_field, self.brush_value, self.brush_radius,
                        self.brush_mode, self.undo])
        params = w.VBox(list(self.sliders.values()))
        return [bar, canvas_widget, brush, self.profiler, params, self.status]
