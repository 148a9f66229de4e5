"""What fits at 1280×800 logical pixels at 100 %, 150 % and 200 % (each scale in its own process: Qt reads
QT_SCALE_FACTOR when the application starts)."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("layout_probe.py")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["1.0", "1.5", "2.0"])
def facts(request, tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp(f"layout{request.param}")
    env = dict(os.environ, QT_SCALE_FACTOR=request.param, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(PROBE), str(work)], capture_output=True, text=True, env=env, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_window_is_1280_by_800(facts):
    assert facts["window"] == [1280, 800]


def test_important_tree_columns_are_on_screen(facts):
    tree = facts["tree"]
    for name in tree["important"]:
        column = tree["columns"][name]
        assert column["left"] >= 0 and column["left"] + column["width"] <= tree["viewport"], (name, tree)


def test_tree_headers_and_cells_are_not_cut(facts):
    for name, column in facts["tree"]["columns"].items():
        assert column["width"] >= column["header_hint"], name
        if name != "NAME":
            assert column["width"] >= column["widest_text"] + 4, name


def test_long_names_keep_their_layer_number_and_tail(facts):
    tree = facts["tree"]
    shown = tree["shown_name"]
    elided_well = shown.endswith("q_proj.weight") and ".1." in shown.replace("…", ".")
    assert elided_well or shown == "model.layers.1.self_attn.q_proj.weight"
    assert "1" in shown and tree["shown_name_width"] <= tree["name_room"]
    assert tree["columns"]["NAME"]["width"] >= 0.3 * tree["viewport"]


def test_hex_view_shows_all_16_byte_columns(facts):
    assert facts["hex"]["hex_end"] <= facts["hex"]["viewport"], facts["hex"]


def test_hex_view_shows_the_ascii_column(facts):
    assert facts["hex"]["content"] <= facts["hex"]["viewport"], facts["hex"]


def test_data_inspector_values_are_not_cut(facts):
    assert facts["inspector"]["found"] and facts["inspector"]["cut"] == []


def test_go_to_offset_dialog_text_is_not_clipped(facts):
    assert facts["goto"] == {"cut": [], "clipped": []}


def test_spy_histogram_tick_labels_do_not_overlap(facts):
    for plot in facts["profile"]["plots"]:
        labels = sorted(plot["labels"], key=lambda label: label[1])
        assert len(labels) >= 2, plot
        for (_, _, right), (_, left, _) in itertools.pairwise(labels):
            assert right < left, plot
        assert all(len(text) <= 5 for text, _, _ in labels), plot     # '12.5M', not '12500000'
