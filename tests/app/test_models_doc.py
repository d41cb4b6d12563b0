"""docs/MODELS.md, the model reference the code comments point to, stays true: every model has
its parameter table with each parameter's default, unit and live flag as `describe` gives them,
every scenario and field is listed, and every section a comment cites exists."""
import re
from pathlib import Path

import pytest

from pdestudio import solvers

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "MODELS.md").read_text()


def _cell(v) -> str:
    return "none" if v is None else str(v).replace("|", "\\|").replace("\n", " ")


@pytest.mark.parametrize("model", solvers.available_models())
def test_every_parameter_scenario_and_field_is_in_the_reference(model):
    d = solvers.describe(model)
    start = DOC.index(f"**`{model}`**")
    block = DOC[start:DOC.find("**`", start + 5) if "**`" in DOC[start + 5:] else None]
    for p in d["parameters"]:
        row = f"| `{p['name']}` | {_cell(p['default'])} | {_cell(p['unit']) or '–'} |"
        assert row in block, f"{model}: {row}"
        assert re.search(re.escape(row) + r"[^\n]*\| (yes|no) \|", block)
    for s in d["scenarios"]:
        assert f"| `{s['name']}` |" in block, f"{model}: scenario {s['name']}"
    for f in d["fields"]:
        assert f"| `{f['name']}`" in block, f"{model}: field {f['name']}"


def test_sections_cited_by_the_code_exist():
    cited = set()
    for folder in ("solvers", "app", "tests", "benchmarks"):
        for f in (ROOT / folder).rglob("*"):
            if f.suffix in (".py", ".cu", ".cuh") and "__pycache__" not in f.parts:
                cited |= set(re.findall(r"docs/MODELS\.md §(\d+(?:\.\d+)?)", f.read_text()))
    headings = set(re.findall(r"^#+ §(\d+(?:\.\d+)?) ", DOC, re.M))
    assert not cited - headings, sorted(cited - headings)
    for label in ("[P0]", "[P1]", "[P2]", "[P3]", "[P4]"):
        assert f"| {label} |" in DOC
