"""A first start on a short screen (1920×1080 at 150 %: 1280×720 logical) leaves the plots their room: Problems and
the Data Inspector become tabs beside Properties (whole titles, scrolled), and the heatmap keeps at least 40 % of
the window's height (it was a ~170 px strip under the bottom docks)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("short_screen_probe.py")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scale, width, height", [("1.5", 1920, 1080), ("1.0", 1366, 768), ("2.0", 2560, 1440)])
def test_the_heatmap_keeps_its_share_of_a_short_window(tmp_path, scale, width, height):
    env = dict(os.environ, QT_SCALE_FACTOR=scale, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(PROBE), str(tmp_path), str(width), str(height)], capture_output=True,
                          text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts["plot_visible"] and facts["plot"] >= 0.4 * facts["window"][1], facts
    [titles] = facts["tabs"]
    assert {"Properties", "Problems", "Data Inspector"} <= set(titles) and facts["elide"] == ["ElideNone"], facts
