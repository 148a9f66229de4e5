"""Save / Save As from the app (issue 6): formats, live refusals, reopen, verify, cancel, reference readers."""
from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened, select_tensor  # noqa: F401
from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.check import check_file
from ztviewer.codec.save import stale_temporaries
from ztviewer.gui.editing.attributes_model import AttrColumn


def wait_saved(qtbot, window, path, old_view):
    qtbot.waitUntil(lambda: (v := window.view_for(str(path))) is not None and v is not old_view, timeout=15_000)
    return window.view_for(str(path))


def verify_in_app(qtbot, view):
    with qtbot.waitSignal(view.checks.verifier.ended, timeout=15_000) as blocker:
        assert view.verify() is not None
    assert blocker.args == ["finished"]
    assert view.problems_model.counts()[0] == 0


def assert_checks(path):
    tf = open_file(path)
    try:
        report = check_file(tf)
        assert not [p for p in report.problems if p.is_error], report.problems
        return report
    finally:
        tf.close()


def test_save_in_place_reopens_clean(qtbot, window, tmp_path):
    path = make_file(tmp_path, digest="crc32c")
    view, _session = opened(qtbot, window, path)
    model = window.editing.editor.model
    model.setData(model.index(0, AttrColumn.VALUE), "Apache-2.0")
    assert window.isWindowModified()
    window.editing.save_action.trigger()
    assert view.save_progress is not None and not window.editing.save_action.isEnabled()
    new = wait_saved(qtbot, window, path, view)
    assert new.tensor_file.attributes["license"] == "Apache-2.0" and new.tensor_file.variant == "v1.0"
    assert not window.isWindowModified() and new.edit_session.stack.count() == 0
    assert window.editing.editor.model.attributes()["license"] == "Apache-2.0"
    verify_in_app(qtbot, new)
    assert assert_checks(path).digests_verified == 2


def edit_objects_file(window, view):
    """Typed and renamed edits that every zt target can carry."""
    model = window.editing.editor.model
    model.setData(model.index(0, AttrColumn.VALUE), "Apache-2.0")
    select_tensor(view, "a")
    row = model.add("origin", "app")
    assert row >= 0
    window.editing.ask_text = lambda *args: "bias"
    select_tensor(view, "b")
    view.tree_editing.rename_current()


@pytest.mark.parametrize("target, options", [
    ("zt-v1.0", {"encoding": "zstd", "level": 5, "digest": "sha256"}),
    ("zt-objects", {"digest": "crc32c"}),
    ("zt-v0.1", {"encoding": "zstd", "digest": "crc32c"}),
    ("safetensors", {}),
])
def test_save_as_each_format(qtbot, window, tmp_path, target, options):
    view, _session = opened(qtbot, window, make_file(tmp_path, "zt-objects", "src.zt"))
    edit_objects_file(window, view)
    out = tmp_path / ("out.safetensors" if target == "safetensors" else f"out-{target}.zt")
    dialog = window.editing.save_as()
    dialog.path_edit.setText(str(out))
    dialog.set_options(target, **options)
    if target == "zt-v0.1":            # v0.1 has no file metadata: refused live, until the attributes go
        assert not dialog.can_save() and "file-level attributes" in dialog.message.text()
        dialog.reject()
        view.select_item(None)
        window.editing.editor.model.remove([0, 1])
        dialog = window.editing.save_as()
        dialog.path_edit.setText(str(out))
        dialog.set_options(target, **options)
    if target == "safetensors":        # no per-tensor attributes: refused live, named
        assert not dialog.can_save() and "attributes on tensor 'a'" in dialog.message.text()
        dialog.reject()
        select_tensor(view, "a")
        window.editing.editor.model.remove([0])
        dialog = window.editing.save_as()
        dialog.path_edit.setText(str(out))
        dialog.set_options(target, **options)
    assert dialog.can_save(), dialog.message.text()
    dialog.accept()
    new = wait_saved(qtbot, window, out, view)
    tf = new.tensor_file
    assert sorted(t.name for t in tf.tensors) == ["a", "bias"]
    if target != "zt-v0.1":
        assert tf.attributes["license"] == "Apache-2.0"
    if target != "safetensors":
        assert tf.tensors[0].attributes == {"origin": "app"}
    assert not window.isWindowModified() and new.edit_session.stack.count() == 0
    assert os.path.exists(tmp_path / "src.zt")
    assert assert_checks(out).tensors_decoded == 2


def test_live_refusal_and_densify(qtbot, window, tmp_path):
    from ztviewer.codec.arrays import SparseArray

    path = tmp_path / "sparse.zt"
    save_arrays(path, {"s": SparseArray("sparse_csr", (2, 3), np.array([1.0, 2.0], np.float32),
                                         indices=np.array([0, 2]), indptr=np.array([0, 1, 2]))})
    view, _session = opened(qtbot, window, path)
    dialog = window.editing.save_as()
    assert dialog.can_save() and dialog.message.text().startswith("Ready")
    dialog.set_options("safetensors", encoding="zstd")
    assert not dialog.can_save() and "zstd" in dialog.message.text()
    dialog.set_options("safetensors")
    assert not dialog.can_save() and "densify" in dialog.message.text()
    dialog.set_options("safetensors", densify=True)
    assert dialog.can_save() and "stored dense" in dialog.message.text()
    out = dialog.path
    assert out.endswith("sparse-edited.safetensors")
    dialog.accept()
    new = wait_saved(qtbot, window, out, view)
    assert new.tensor_file.tensors[0].layout == "dense"


def test_cancelled_save_leaves_nothing(qtbot, window, tmp_path, monkeypatch):
    import threading

    from ztviewer.codec.writers.output import Output

    holding, released, report = threading.Event(), threading.Event(), Output.report

    def held_report(out, work):     # the save waits after its first bytes until the cancel was asked for
        report(out, work)
        if work and threading.current_thread() is not threading.main_thread():
            holding.set()
            assert released.wait(60), "the save was never released"     # a hang guard, not a figure

    monkeypatch.setattr(Output, "report", held_report)
    path = tmp_path / "big.zt"
    rng = np.random.default_rng(0)
    save_arrays(path, {f"t{i}": rng.random(2_000_000, dtype=np.float32) for i in range(8)}, attributes={"k": "v"})
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    view, session = opened(qtbot, window, path)
    window.editing.editor.model.add("more", "x")
    out = tmp_path / "out.zt"
    dialog = window.editing.save_as()
    dialog.path_edit.setText(str(out))
    dialog.set_options("zt-v1.0", encoding="zstd", level=9, digest="sha256")
    dialog.accept()
    strip = view.save_progress
    task = window.editing.saver.tasks[id(view)]
    qtbot.waitUntil(holding.is_set, timeout=30_000)     # a hang guard; the cancel is seen by the next check
    with qtbot.waitSignal(task.signals.cancelled, timeout=30_000):
        strip.cancel_button.click()
        released.set()
    assert not out.exists() and not stale_temporaries(str(out))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert view.save_progress is None and session.modified and not session.saving
    assert window.view_for(str(path)) is view and "cancelled" in window.statusBar().currentMessage()


def test_hf_safetensors_reads_app_saved_metadata(qtbot, window, tmp_path):
    safetensors = pytest.importorskip("safetensors")
    path = make_file(tmp_path, "safetensors", "m.safetensors")
    view, _session = opened(qtbot, window, path)
    model = window.editing.editor.model
    model.setData(model.index(0, AttrColumn.VALUE), "Apache-2.0")
    model.add("edited_by", "ztviewer")
    window.editing.save_action.trigger()
    wait_saved(qtbot, window, path, view)
    with safetensors.safe_open(str(path), "np") as f:
        assert f.metadata() == {"license": "Apache-2.0", "note": "x", "edited_by": "ztviewer"}
        np.testing.assert_array_equal(f.get_tensor("a"), np.arange(6, dtype=np.float32).reshape(2, 3))


def test_cli_check_passes_on_app_saved_file(qtbot, window, tmp_path):
    path = make_file(tmp_path, "zt-objects", "o.zt")
    view, _session = opened(qtbot, window, path)
    edit_objects_file(window, view)
    window.editing.save_action.trigger()
    wait_saved(qtbot, window, path, view)
    done = subprocess.run([sys.executable, "-m", "ztviewer", "check", str(path)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_save_as_blz_where_it_fits(qtbot, window, tmp_path):
    from ztviewer.codec.arrays import TensorTrainArray

    rng = np.random.default_rng(2)
    path = tmp_path / "tt.zt"
    save_arrays(path, {"tt": TensorTrainArray([rng.random((1, 4, 2)), rng.random((2, 5, 1))])})
    view, _session = opened(qtbot, window, path)
    dialog = window.editing.save_as()
    dialog.set_options("blz")
    assert dialog.can_save(), dialog.message.text()
    out = dialog.path
    assert out.endswith("tt-edited.blz")
    dialog.accept()
    new = wait_saved(qtbot, window, out, view)
    assert new.tensor_file.format == "blz" and new.edit_session.writable
    assert assert_checks(out).tensors_decoded == 1


def test_save_says_which_unknown_keys_it_dropped(qtbot, window, tmp_path):
    from tests.gui.window_helpers import open_in_window
    from ztviewer.codec.edit import SetFileAttribute

    header = b'{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x-entry":1}}'
    path = tmp_path / "m.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x07")
    view = open_in_window(qtbot, window, path)
    view.edit_session.push(SetFileAttribute("producer", "ztviewer test"))
    window.editing.save_action.trigger()
    wait_saved(qtbot, window, path, view)
    message = window.statusBar().currentMessage()
    assert message.startswith(f"Saved {path}") and "dropped" in message and "tensor 'w': 'x-entry'" in message
