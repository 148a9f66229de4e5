"""Smoke test of the benchmark runner: ``--quick`` in-process; every row is well formed (no timing goals)."""
from __future__ import annotations

import json
import math

import pytest

from benchmarks import runner
from benchmarks.common import REQUIRED_KEYS

# The runner runs every module, GUI ones included; Qt's offscreen platform warns that it cannot resize
# native windows to size hints (see tests/gui/conftest.py). That is not a warning about our code.
OFFSCREEN_NOISE = r"This plugin does not support propagateSizeHints\(\)"


@pytest.mark.timeout(300)
@pytest.mark.qt_log_ignore(OFFSCREEN_NOISE)
def test_quick_run_reports_every_figure(tmp_path, capsys):
    output = tmp_path / "latest.json"
    assert runner.main(["--quick", "--no-profile", "--output", str(output), "--tmpdir", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    doc = json.loads(output.read_text())
    rows = doc["results"]
    assert {r["module"] for r in rows} == set(runner.discover())
    assert len(rows) >= 8
    for row in rows:
        assert set(REQUIRED_KEYS) <= set(row), row
        assert isinstance(row["ratio"], (int, float)) and math.isfinite(row["ratio"]) and row["ratio"] > 0, row
        assert row["ours_s"] > 0 and row["reference_s"] > 0, row
        assert row["passed"] in (True, False, None), row
        assert row["name"] in table
    # the temporary files are gone
    assert not any(p.name.startswith("ztviewer-bench-") for p in tmp_path.iterdir())


def test_only_selects_one_module(tmp_path):
    rows = runner.run(quick=True, only=["decode"], output=None, tmp_root=str(tmp_path), profile=False, echo=False)
    assert rows and {r["module"] for r in rows} == {"decode"}
