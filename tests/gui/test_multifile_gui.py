"""Issue 8 in the window: a sharded checkpoint opens (folder, index JSON or one shard) as one tree whose
tensors show their shard, and the hex view follows the selected tensor into its shard."""
from __future__ import annotations

import json

import numpy as np
import pytest
import safetensors.numpy

from tests.gui.window_helpers import open_in_window


@pytest.fixture
def sharded(tmp_path):
    weight_map, total = {}, 0
    for shard in range(3):
        name = f"model-{shard + 1:05d}-of-00003.safetensors"
        arrays = {f"layers.{shard}.w{i}": np.full((4, 4), shard * 10 + i, np.float32) for i in range(2)}
        safetensors.numpy.save_file(arrays, str(tmp_path / name))
        weight_map.update(dict.fromkeys(arrays, name))
        total += sum(a.nbytes for a in arrays.values())
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    return tmp_path


def _tensor_rows(view):
    model = view.tree_model
    return [(model.tensor_of(model.index(i, 0, model.file_index())).name)
            for i in range(model.rowCount(model.file_index()))]


@pytest.mark.parametrize("target", ["folder", "index", "shard"])
def test_sharded_checkpoint_opens_as_one_tree(qtbot, window, sharded, target):
    path = {"folder": sharded, "index": sharded / "model.safetensors.index.json",
            "shard": sharded / "model-00002-of-00003.safetensors"}[target]
    view = open_in_window(qtbot, window, path)
    tf = view.tensor_file
    assert tf.format == "safetensors-sharded" and tf.readable
    assert sorted(_tensor_rows(view)) == sorted(f"layers.{s}.w{i}" for s in range(3) for i in range(2))
    assert not list(tf.all_problems())


def test_selecting_a_tensor_shows_its_shard_bytes(qtbot, window, sharded):
    view = open_in_window(qtbot, window, sharded)
    tensor = view.tensor_file.tensor("layers.2.w1")
    assert view.select_item(tensor, "data")
    shard_source = view.tensor_file.source_for(tensor)
    assert view.hex_view._source is shard_source
    component = tensor.components["data"]
    assert view.hex_view.selection() == (component.offset, component.length)
    value = np.frombuffer(shard_source.window(component.offset, 4), np.float32)[0]
    assert value == 21.0
    assert window.inspector.source is shard_source
    kinds = {segment.kind for segment in view.layout_map.segments}
    assert "header" in kinds and "gap" not in kinds


def test_missing_shard_is_a_problem_in_the_window(qtbot, window, sharded):
    (sharded / "model-00003-of-00003.safetensors").unlink()
    view = open_in_window(qtbot, window, sharded)
    messages = [p.message for p in view.tensor_file.all_problems()]
    assert any("model-00003-of-00003.safetensors" in m for m in messages)
    assert view.problems_model.rowCount() >= 1
