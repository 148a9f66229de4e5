"""Hex find (bytes, text, typed values; next/previous, wrap, worker), range selection and copies."""
from __future__ import annotations

import struct

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QMouseEvent

from tests.gui.window_helpers import open_in_window
from ztviewer.gui.views.hex_copy import parse_range


def find(qtbot, bar, backward=False):
    with qtbot.waitSignal(bar.finished, timeout=10_000) as hit:
        (bar.find_previous if backward else bar.find_next)()
    return hit.args[0]


def test_find_typed_values_text_and_hex_in_the_window(qtbot, window, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"
    values = np.array([1.0, 2.5, -3.0, 2.5], dtype=np.float32)
    save_file({"w": values}, str(path), metadata={"note": "hello world"})
    data = path.read_bytes()
    view = open_in_window(qtbot, window, path)
    bar = view.decoded_bytes.find_bar
    window.actions_.find_bytes.trigger()
    assert view.inspect_tabs.currentWidget() is view.decoded_bytes and bar.isVisible()
    bar.kind.setCurrentIndex(bar.kind.findData("f32"))
    bar.pattern.setText("2.5")
    first = data.index(struct.pack("<f", 2.5))
    assert find(qtbot, bar) == first
    assert view.hex_view.selection() == (first, 4)
    second = data.index(struct.pack("<f", 2.5), first + 1)
    assert find(qtbot, bar) == second
    assert find(qtbot, bar) == first and "wrapped" in bar.status.text()
    assert find(qtbot, bar, backward=True) == second          # before `first`, wrapping from the end
    bar.kind.setCurrentIndex(bar.kind.findData("text"))
    bar.pattern.setText("hello world")
    assert find(qtbot, bar) == data.index(b"hello world")
    bar.kind.setCurrentIndex(bar.kind.findData("hex"))
    bar.pattern.setText("00 00 40 C0")                            # -3.0 as little-endian f32
    assert find(qtbot, bar) == data.index(struct.pack("<f", -3.0))
    bar.kind.setCurrentIndex(bar.kind.findData("f32"))
    bar.big_endian.setChecked(True)
    bar.pattern.setText("-3")
    assert find(qtbot, bar) is None and bar.status.text() == "not found"
    bar.kind.setCurrentIndex(bar.kind.findData("hex"))
    bar.pattern.setText("zz")
    bar.find_next()
    assert "whole hex bytes" in bar.status.text()
    assert window.actions_.find_next_bytes.shortcut().toString() == "F3"
    assert window.actions_.find_previous_bytes.shortcut().toString() == "Shift+F3"


def test_select_range_and_copy_formats(qtbot, window, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"
    save_file({"w": np.arange(64, dtype=np.uint8), "big": np.zeros(3 << 19, np.uint8)}, str(path))
    data = path.read_bytes()
    view = open_in_window(qtbot, window, path)
    actions = view.decoded_bytes.hex_actions
    assert actions.select_text("0x10 +8")
    assert view.hex_view.selection() == (16, 8)
    assert actions.copy("hex") == data[16:24].hex(" ").upper()
    assert QGuiApplication.clipboard().text() == data[16:24].hex(" ").upper()
    assert eval(actions.copy("python")) == data[16:24]
    assert actions.copy("c").startswith("const unsigned char data[8] = {")
    assert actions.select_text(f"0-{len(data) - 1}")
    assert not actions.select_text(f"0 +{len(data) + 1}")
    assert "not inside" in window.statusBar().currentMessage()
    assert len(data) > 1 << 20
    actions.hex_view.set_selection(0, len(data))
    assert actions.copy("hex") is None
    assert "at most 1,048,576 bytes" in window.statusBar().currentMessage()


def test_shift_click_and_drag_select(qtbot, window, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "m.safetensors"
    save_file({"w": np.arange(256, dtype=np.uint8)}, str(path))
    view = open_in_window(qtbot, window, path)
    hexv = view.hex_view
    view.inspect_tabs.setCurrentWidget(view.decoded_bytes)
    qtbot.waitUntil(lambda: hexv.byte_rect(0) is not None)
    a, b = hexv.byte_rect(2).center(), hexv.byte_rect(16 + 5).center()
    qtbot.mouseClick(hexv.viewport(), Qt.MouseButton.LeftButton, pos=a)
    qtbot.mouseClick(hexv.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, pos=b)
    assert hexv.selection() == (2, 20)
    c = hexv.byte_rect(40).center()
    qtbot.mousePress(hexv.viewport(), Qt.MouseButton.LeftButton, pos=c)
    qtbot.mouseMove(hexv.viewport(), pos=QPoint(hexv.byte_rect(33).center()))
    move = QMouseEvent(QEvent.Type.MouseMove, QPointF(hexv.byte_rect(33).center()), QPointF(),
                       Qt.MouseButton.NoButton, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QGuiApplication.sendEvent(hexv.viewport(), move)
    assert hexv.selection() == (33, 8)


def test_parse_range():
    assert parse_range("0x10 +8", 100) == (16, 8)
    assert parse_range("16-23", 100) == (16, 8)
    assert parse_range("16..23", 100) == (16, 8)
    for bad in ("x", "5 +0", "90 +20"):
        try:
            parse_range(bad, 100)
        except ValueError:
            continue
        raise AssertionError(bad)
