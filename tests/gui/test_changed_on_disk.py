"""Issue 16 §10 in the app: a file truncated by another program while open is reported once, reading it is
refused (never SIGBUS), and Reload reads it again keeping the unsaved edits."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from tests.gui.window_helpers import open_in_window
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.edit import SetFileAttribute
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.file_stamps import REPLACED

ARRAYS = {"a": np.arange(1 << 16, dtype=np.float32), "b": np.arange(4, dtype=np.int64)}


@pytest.fixture(autouse=True)
def _discard_on_close(request):
    if "window" in request.fixturenames:
        request.getfixturevalue("window").editing.ask_unsaved = lambda view: "discard"


def test_truncated_file_is_reported_and_reload_keeps_the_edits(qtbot, window, tmp_path):
    path = tmp_path / "m.zt"
    save_arrays(path, ARRAYS, "zt", attributes={"license": "MIT"})
    view = open_in_window(qtbot, window, path)
    view.edit_session.edits.push(SetFileAttribute("note", "unsaved"))
    assert view.edit_session.modified

    with open(path, "r+b") as other:  # another program shortens the file
        other.truncate(200)
    window.disk_watch.poll()
    box = window.disk_watch.box
    assert isinstance(box, QMessageBox) and "changed on disk" in box.text() and "unsaved edits" in box.informativeText()
    with pytest.raises(SourceChanged):
        view.tensor_file.source.view(64, 16)
    window.disk_watch.poll()
    assert window.disk_watch.box is box  # said once per file

    save_arrays(path, ARRAYS, "zt", attributes={"license": "MIT"})  # the file is whole again
    reload = next(b for b in box.buttons() if b.text() == "Reload")
    reload.click()
    qtbot.waitUntil(lambda: window.current_view() is not None and window.current_view() is not view, timeout=10_000)
    new = window.current_view()
    assert new.edit_session.modified and new.edit_session.doc.attributes == {"license": "MIT", "note": "unsaved"}
    assert new.tensor_file.source.changed() is None


def test_keep_showing_leaves_the_tab_alone(qtbot, window, tmp_path):
    path = tmp_path / "m.zt"
    save_arrays(path, ARRAYS, "zt")
    view = open_in_window(qtbot, window, path)
    with open(path, "r+b") as other:
        other.truncate(100)
    window.disk_watch.poll()
    box = window.disk_watch.box
    keep = next(b for b in box.buttons() if b.text() == "Keep showing")
    keep.click()
    assert window.current_view() is view and window.disk_watch.box is None


@pytest.mark.skipif(os.name == "nt", reason="the file is replaced while open, which Windows refuses")
def test_the_tabs_own_save_is_not_a_change_on_disk(qtbot, window, tmp_path):
    """A save replaces the file by rename, which the watcher tells for another program's save; the tab's own save,
    until the tab shows the saved file again, is not told."""
    path = tmp_path / "m.zt"
    save_arrays(path, ARRAYS, "zt")
    view = open_in_window(qtbot, window, path)
    window.disk_watch.timer.stop()                   # polled by hand below
    reopened = []
    window.opener.start_open = lambda *args, **kwargs: reopened.append(args[0])    # the tab keeps the old file
    view.edit_session.edits.push(SetFileAttribute("note", "saved"))
    window.editing.save_action.trigger()
    window.disk_watch.poll()                         # while it writes
    qtbot.waitUntil(lambda: reopened == [str(path)], timeout=15_000)
    assert view.tensor_file.source.changed() == REPLACED     # what another program's save would have been told as
    window.disk_watch.poll()
    assert window.disk_watch.box is None and window.current_view() is view
