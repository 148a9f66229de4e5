"""Verifying zTensor v2 part digests (xxh3 and sha256, over the decoded bytes) from the window: progress in
stored bytes, cancel, and the failing parts pointed at in the tree's digest column and the Problems panel."""
from __future__ import annotations

import numpy as np

from tests.gui.v2_files import conformance, tied_and_seekable, ztensor
from tests.gui.window_helpers import open_in_window
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.digest import DECODED_RULE
from ztviewer.gui.models.tensor_tree import Column, TreeRole


def state(view, tensor, role=None):
    index = view.tree_model.index_of(tensor, role, Column.DIGEST)
    return view.tree_model.data(index, TreeRole.DIGEST_STATE)


def _verify(qtbot, view):
    progress = []
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=15_000) as blocker:
        task = view.verify()
        task.signals.progress.connect(lambda done, total: progress.append((done, total)))
    assert blocker.args == ["finished"]
    return task, progress


def test_a_sound_v2_file_verifies_ok(qtbot, window, tmp_path):
    view = open_in_window(qtbot, window, tied_and_seekable(tmp_path / "t.zt"))
    task, progress = _verify(qtbot, view)
    tf = view.tensor_file
    assert [state(view, t) for t in tf.tensors] == ["ok"] * 4
    assert task.total_bytes == sum(t.stored_nbytes for t in tf.tensors)   # progress counts stored bytes
    assert not progress or progress[-1][0] <= task.total_bytes
    assert view.problems_model.counts() == (0, 0)


def test_a_corrupted_part_is_pointed_at(qtbot, window, tmp_path):
    path = tied_and_seekable(tmp_path / "t.zt")
    zt = ztensor()
    with zt.open(str(path)) as source:
        offset = source["bias"].location.offset
    data = bytearray(path.read_bytes())
    data[offset + 4] ^= 0x40                      # the second float of 'bias'
    path.write_bytes(bytes(data))
    view = open_in_window(qtbot, window, path)
    _verify(qtbot, view)
    tf = view.tensor_file
    bias = tf.tensor("bias")
    assert state(view, bias) == "mismatch" and state(view, bias, "data") == "mismatch"
    assert state(view, tf.tensor("big")) == "ok" and state(view, tf.tensor("embed.weight")) == "ok"
    assert view.tree_model.index_of(bias, "data", Column.DIGEST).data() == "✗ mismatch"
    (problem,) = [p for p in view.problems_model.problems() if p.rule == DECODED_RULE]
    component = bias.components["data"]
    assert (problem.tensor, problem.component, problem.offset) == ("bias", "data", component.offset)
    assert "xxh3 of the decoded bytes" in problem.message and component.digest.split(":")[1] in problem.message
    window.problems_panel.activate_row(0)
    assert view.current_tensor() is bias


def test_sha256_digests_of_seekable_parts_and_cancel(qtbot, window, tmp_path):
    path = tmp_path / "sha.zt"
    big = np.random.default_rng(1).standard_normal((2048, 1024)).astype(np.float32)
    save_arrays(path, {"big": big, "small": np.arange(7, dtype=np.int32)}, "zt-v2", compress=("zstd", 3),
                digest="sha256")
    view = open_in_window(qtbot, window, path)
    parts = [t.components["data"] for t in view.tensor_file.tensors]
    assert all(p.digest.startswith("sha256:") and p.encoding == "zt.zstd-seekable/1" for p in parts)
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=15_000) as blocker:
        view.verify()
        view.checks.verifier.cancel()
    assert blocker.args[0] in ("cancelled", "finished")
    _verify(qtbot, view)
    assert [state(view, t) for t in view.tensor_file.tensors] == ["ok", "ok"]
    with ztensor().open(str(path)) as source:           # the reference agrees
        assert source.verify(deep=True).checked == 2


def test_the_conformance_vector_with_a_digest_verifies(qtbot, window):
    view = open_in_window(qtbot, window, conformance("verify-ok.zt"))
    _verify(qtbot, view)
    assert state(view, view.tensor_file.tensor("t")) == "ok"
