"""`pdestudio bench --quick` on a CPU: about a minute at most, every row printed once with the
columns a CPU can fill (steps/s, cell updates/s, GB/s, the roofline against NumPy's measured copy
bandwidth, time to t_end, the speed-up column's NumPy baseline), GPU-only variants not timed on
NumPy."""
import json
import subprocess
import sys
import time

import pytest

from pdestudio import solvers


@pytest.mark.slow
def test_quick_bench_on_the_cpu(tmp_path):
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pdestudio", "bench", "--quick", "--backends",
                        "numpy", "--json", str(tmp_path / "b.json")],
                       capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    print(f"pdestudio bench --quick: {wall:.1f} s")
    assert wall <= 60
    data = json.loads((tmp_path / "b.json").read_text())
    rows = data["rows"]
    assert data["header"]["host_copy_bandwidth_gbps"] > 0
    table = [ln for ln in r.stdout.splitlines() if ln.startswith("| ") and "---" not in ln]
    assert len(table) == len(rows) + 1  # the header, then each row exactly once
    assert len(set(table)) == len(table)
    assert r.stderr.count(" | ") == 0  # rows are not repeated on stderr
    models = {row["model"] for row in rows}
    assert models == set(solvers.available_models())
    for row in rows:
        assert row["steps_per_s"] > 0 and row["cell_updates_per_s"] > 0 and row["gbps"] > 0
        assert 0 < row["roofline"] < 2
        assert row["speedup_vs_numpy"] == 1.0
        assert (row["time_to_t_end"] is not None) == (row["t_end"] is not None)
        assert "method" not in row["variant"] or row["variant"]["method"] == "classic"
    for line in table[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[8].endswith("%") and cells[10] == "1.0"
    # one row per model, variant (less the GPU strategies) and dtype: one size each
    keys = [(row["model"], json.dumps(row["variant"]), row["dtype"]) for row in rows]
    assert len(keys) == len(set(keys))
