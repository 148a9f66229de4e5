"""Save As: the name's extension (or the file dialog's filter) decides the format; a mismatch is asked about."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt

from tests.gui.test_edit_attributes import make_file, opened
from tests.gui.test_edit_save import wait_saved
from ztviewer.codec.multifile import open_path
from ztviewer.gui.dialogs.save_as import format_for_name, name_filters


def test_format_for_name_follows_known_extensions_only():
    assert format_for_name("x.zt", "safetensors") == "zt-v2"
    assert format_for_name("x.ZT", "zt-v1.0") is None           # a zTensor format keeps its generation
    assert format_for_name("x.safetensors", "zt-v2") == "safetensors"
    assert format_for_name("x.blz", "zt-v2") == "blz"
    assert format_for_name("x.bin", "safetensors") is None      # unknown: asked about when saving
    assert ("zTensor v1.0 (*.zt)", "zt-v1.0") in name_filters()   # v1 stays choosable


def test_typing_a_zt_name_and_enter_writes_ztensor(qtbot, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path, "safetensors", "m.safetensors"))
    dialog = window.editing.save_as()
    assert dialog.format_combo.currentData() == "safetensors"
    dialog.path_edit.clear()
    out = tmp_path / "x.zt"
    qtbot.keyClicks(dialog.path_edit, str(out))
    assert dialog.format_combo.currentData() == "zt-v2"
    assert "chosen by the extension .zt" in dialog.message.text()
    qtbot.keyClick(dialog.path_edit, Qt.Key.Key_Return)
    new = wait_saved(qtbot, window, out, view)
    assert new.tensor_file.format == "zt-v2"
    reread = open_path(str(out))
    assert reread.format == "zt-v2" and sorted(t.name for t in reread.tensors) == ["a", "b"]
    reread.close()


def test_choosing_v1_keeps_the_zt_name(qtbot, window, tmp_path):
    _view, _session = opened(qtbot, window, make_file(tmp_path, "safetensors", "m.safetensors"))
    dialog = window.editing.save_as()
    dialog.path_edit.setText(str(tmp_path / "y.zt"))
    dialog.set_options("zt-v1.0")
    assert dialog.path.endswith("y.zt") and dialog.format_combo.currentData() == "zt-v1.0"
    dialog.path_edit.setText(str(tmp_path / "z.zt"))         # a .zt name keeps the chosen zTensor generation
    assert dialog.format_combo.currentData() == "zt-v1.0"
    dialog.reject()


def test_an_extension_that_fits_no_format_is_asked_about(qtbot, window, tmp_path):
    view, _session = opened(qtbot, window, make_file(tmp_path, "safetensors", "m.safetensors"))
    dialog = window.editing.save_as()
    asked: list[tuple] = []
    dialog.ask_mismatch = lambda *args: asked.append(args) or "cancel"
    dialog.path_edit.setText(str(tmp_path / "x.bin"))
    assert dialog.format_combo.currentData() == "safetensors" and dialog.can_save()
    dialog.accept()
    assert asked == [("x.bin", "safetensors", ".safetensors")]
    assert dialog.isVisible() and not os.path.exists(tmp_path / "x.bin")
    dialog.ask_mismatch = lambda *args: "fix"
    dialog.accept()
    out = tmp_path / "x.bin.safetensors"
    new = wait_saved(qtbot, window, out, view)
    assert new.tensor_file.format == "safetensors"
