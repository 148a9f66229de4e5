"""Issue 31 in the window: opening a file beside any append journal changes nothing (file hashed before and after,
the journal left where it was); an interrupted append is listed in Problems and File ▸ Repair Interrupted Save…
rolls it back only after the user confirms, to the exact bytes before it, then shows the repaired file."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from tests.gui.window_helpers import open_in_window
from ztviewer.codec.append_journal import footer_hash, journal_path
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.edit import SetFileAttribute
from ztviewer.codec.save import edit_file

ARRAYS = {"w": np.arange(1000, dtype=np.float32), "b": np.ones(7, np.int8)}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _journal_text(old: bytes, old_length: object = None) -> str:
    return json.dumps({"old_length": len(old) if old_length is None else old_length,
                       "old_footer": footer_hash(old[-40:]), "new_length": len(old) + 70_000, "new_footer": "0" * 16})


def _interrupted(path: Path) -> bytes:
    save_arrays(path, ARRAYS, to="zt-v2", attributes={"note": "first"})
    sound = path.read_bytes()
    with open(path, "ab") as out:
        out.write(bytes(5000) + b"\x02partial manifest")
    Path(journal_path(path)).write_text(_journal_text(sound))
    return sound


def _two_generations(path: Path) -> bytes:
    save_arrays(path, ARRAYS, to="zt-v2", attributes={"note": "first"})
    first = path.read_bytes()
    edit_file(path, [SetFileAttribute("note", "second")])
    return first


def _journal_messages(view) -> list[str]:
    return [p.message for p in view.problems_model.problems() if "journal" in p.message]


@pytest.mark.parametrize("case", ["v1.0 beside the issue's journal", "old_length -5", "Infinity", "not JSON", "folder",
                                  "FIFO", "stale beside two generations"])
def test_opening_in_the_window_changes_nothing(qtbot, window, tmp_path, case):
    path = tmp_path / "m.zt"
    journal = Path(journal_path(path))
    if case.startswith("v1.0"):
        save_arrays(path, ARRAYS, to="zt")
        journal.write_text(_journal_text(b"", 0))
    elif case == "stale beside two generations":
        journal.write_text(_journal_text(_two_generations(path)))
    else:
        sound = _interrupted(path)
        journal.unlink()
        if case == "folder":
            journal.mkdir()
        elif case == "FIFO":
            if not hasattr(os, "mkfifo"):
                pytest.skip("no FIFOs on this system")
            os.mkfifo(journal)
        else:
            journal.write_text({"old_length -5": _journal_text(sound, -5), "not JSON": "{oops",
                                "Infinity": _journal_text(sound).replace(str(len(sound)), "Infinity", 1)}[case])
    before = _sha(path)
    view = open_in_window(qtbot, window, path)
    messages = _journal_messages(view)
    assert len(messages) == 1 and ("is ignored" in messages[0] or "is stale" in messages[0]), messages
    assert not window.actions_.repair.isEnabled()
    assert _sha(path) == before and os.path.lexists(journal)


def test_repair_rolls_back_an_interrupted_save_after_asking(qtbot, window, tmp_path):
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    damaged = path.read_bytes()
    view = open_in_window(qtbot, window, path)
    assert path.read_bytes() == damaged
    assert any("an interrupted append was found" in m for m in _journal_messages(view))
    assert view.tensor_file.attributes == {"note": "first"} and len(view.tensor_file.tensors) == 2
    assert window.actions_.repair.isEnabled()

    window.actions_.repair.trigger()
    box = window.findChild(QMessageBox, "repairPrompt")
    assert box is not None and f"{len(damaged) - len(sound):,} bytes after byte {len(sound):,}" in box.informativeText()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert path.read_bytes() == damaged and window.current_view() is view  # cancelled: nothing written

    box = window.repair_current()
    assert isinstance(box, QMessageBox)
    view.go_to_offset(len(sound) + 16)                      # the bytes about to be cut are on screen
    next(b for b in box.buttons() if b.text() == "Repair").click()
    view.hex_view.viewport().repaint()                      # painted again before the tab is read again: no error
    qtbot.waitUntil(lambda: window.current_view() is not None and window.current_view() is not view, timeout=10_000)
    assert path.read_bytes() == sound and not os.path.lexists(journal_path(path))
    new = window.current_view()
    assert not new.problems_model.problems() and new.tensor_file.attributes == {"note": "first"}
    assert not window.actions_.repair.isEnabled() and window.disk_watch.box is None
    window.disk_watch.poll()
    assert window.disk_watch.box is None  # the window's own repair is no change on disk to ask about


def test_repair_keeps_the_unsaved_edits(qtbot, window, tmp_path):
    window.editing.ask_unsaved = lambda view: "discard"
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    view = open_in_window(qtbot, window, path)
    view.edit_session.edits.push(SetFileAttribute("extra", "unsaved"))
    box = window.repair_current()
    next(b for b in box.buttons() if b.text() == "Repair").click()
    qtbot.waitUntil(lambda: window.current_view() is not None and window.current_view() is not view, timeout=10_000)
    new = window.current_view()
    assert path.read_bytes() == sound
    assert new.edit_session.modified and new.edit_session.doc.attributes == {"note": "first", "extra": "unsaved"}


def test_a_journal_changed_since_opening_is_refused_not_obeyed(qtbot, window, tmp_path):
    path = tmp_path / "m.zt"
    _interrupted(path)
    view = open_in_window(qtbot, window, path)
    Path(journal_path(path)).write_text("{no longer a journal")
    before = _sha(path)
    box = window.repair_current()
    next(b for b in box.buttons() if b.text() == "Repair").click()
    assert "refused" in window.last_error and "not JSON" in window.last_error
    assert _sha(path) == before and window.current_view() is view
    with open(path, "r+b") as other:  # a change by another program is still told
        other.truncate(100)
    window.disk_watch.poll()
    assert window.disk_watch.box is not None
