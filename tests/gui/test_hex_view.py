"""Hex view: exact highlight of a component's bytes, visible-window reads, scaled scrolling, cursor, inspector."""
from __future__ import annotations

import struct

import pytest
from PySide6.QtCore import QPoint, Qt

from ztviewer.gui.views.data_inspector import DataInspector, decode_value
from ztviewer.gui.views.hex_view import MAX_SCROLL, ROW_BYTES, HexView


def pixel(view: HexView, offset: int, image=None):
    image = image or view.viewport().grab().toImage()
    rect = view.byte_rect(offset)
    assert rect is not None, f"byte {offset} is not on screen"
    return image.pixelColor(rect.left() + 2, rect.top() + 2).name()


def test_selecting_a_component_highlights_exactly_its_bytes(qtbot, file_view, sample_file):
    tensor = sample_file.tensor("sparse.csr")
    component = tensor.components["indices"]
    assert file_view.select_item(tensor, "indices")
    hex_view = file_view.hex_view
    assert hex_view.selection() == (component.offset, component.length)
    image = hex_view.viewport().grab().toImage()
    inside = {pixel(hex_view, o, image) for o in range(component.offset, component.end)}
    assert len(inside) == 1, "every byte of the component has the same highlight"
    before = pixel(hex_view, component.offset - 1, image)
    after = pixel(hex_view, component.end, image)
    assert inside.isdisjoint({before, after})
    assert file_view.file_map._selection == (component.offset, component.length)


def test_selecting_a_tensor_highlights_its_whole_span(qtbot, file_view, sample_file):
    tensor = sample_file.tensor("sparse.csr")
    file_view.select_item(tensor)
    start = min(c.offset for c in tensor.components.values())
    end = max(c.end for c in tensor.components.values())
    assert file_view.hex_view.selection() == (start, end - start)


class FakeSource:
    """A huge 'file' that records which windows were read."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.reads: list[tuple[int, int]] = []

    def window(self, offset: int, length: int) -> bytes:
        self.reads.append((offset, length))
        length = max(0, min(length, self.size - offset))
        return bytes((offset + i) & 0xFF for i in range(length))


def test_reads_only_the_visible_window_and_scales_huge_files(qtbot):
    view = HexView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    source = FakeSource(1 << 40)       # 2^36 rows: more than a scroll bar can count
    view.set_source(source)
    bar = view.verticalScrollBar()
    assert bar.maximum() <= MAX_SCROLL and view._scale > 1
    bar.setValue(bar.maximum())
    source.reads.clear()
    view.viewport().grab()
    assert source.reads and all(length <= (view.visible_rows() + 1) * ROW_BYTES for _, length in source.reads)
    last_row = view.total_rows() - view.visible_rows()
    assert view.first_visible_offset() == last_row * ROW_BYTES
    view.set_cursor(source.size - 1)
    assert view.byte_rect(source.size - 1) is not None
    view.scroll_to_row(last_row - 1)        # row-exact scrolling despite the scale factor
    assert view.first_visible_offset() == (last_row - 1) * ROW_BYTES
    view.set_cursor(123_456_789_012)
    assert view.byte_rect(123_456_789_012) is not None


def test_clicks_and_keys_move_the_cursor(qtbot, file_view):
    view = file_view.hex_view
    view.set_cursor(0)
    rect = view.byte_rect(0x23)
    with qtbot.waitSignal(view.cursor_moved) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [0x23]
    qtbot.keyClick(view, Qt.Key.Key_Down)
    assert view.cursor_offset() == 0x33
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert view.cursor_offset() == 0x34
    qtbot.keyClick(view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert view.cursor_offset() == 0


def test_offset_at_maps_hex_and_ascii_columns(qtbot, file_view):
    view = file_view.hex_view
    for offset in (0, 7, 8, 15, 16, 0x41):
        assert view.offset_at(view.byte_rect(offset).center()) == offset
    y = view.byte_rect(0x10).center().y()
    ascii_x = int(view._ascii_x + 5.5 * view._cw)
    assert view.offset_at(QPoint(ascii_x, y)) == 0x15


def test_double_click_selects_the_owner_of_a_byte(qtbot, file_view, sample_file):
    tensor = sample_file.tensor("model.embed.weight")
    offset = tensor.components["data"].offset + 5
    view = file_view.hex_view
    view.set_cursor(offset)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.byte_rect(offset).center())
    assert file_view.current_item() is tensor.components["data"]
    assert view.cursor_offset() == offset


@pytest.mark.parametrize("label, size, code, value", [
    ("u32", 4, "I", 0xDEADBEEF), ("i16", 2, "h", -2), ("f32", 4, "f", 1.5), ("f64", 8, "d", -0.25),
    ("u64", 8, "Q", 2**63 + 5), ("f16", 2, "e", 0.5),
])
def test_decode_value_little_and_big_endian(label, size, code, value):
    for order, little in (("<", True), (">", False)):
        data = struct.pack(order + code, value) + b"\xff" * 8
        text = decode_value(data, size, code, little)
        assert text.replace(",", "") == (str(value) if isinstance(value, int) else f"{value:g}")


def test_bf16_and_short_reads():
    assert decode_value(b"\xc0\x3f", 2, "bf16") == "1.5"        # 0x3FC0 = 1.5 in bfloat16
    assert decode_value(b"\x01", 4, "I") == "—"


def test_inspector_follows_the_cursor(qtbot, file_view, sample_file):
    inspector = DataInspector()
    qtbot.addWidget(inspector)
    inspector.set_source(sample_file.source)
    component = sample_file.tensor("model.embed.weight").components["data"]
    file_view.cursor_moved.connect(inspector.set_offset)
    file_view.go_to_offset(component.offset + 8)       # third float32 of arange(15): 2.0
    assert inspector.value_text("f32") == "2"
    assert inspector.value_text("u8") == "0"
    inspector.big_endian.setChecked(True)
    assert inspector.value_text("u32") == f"{0x40:,}"


def _contrast(a, b) -> float:
    """WCAG contrast ratio of two QColors."""
    def luminance(c):
        channels = [((v / 12.92) if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4) for v in c.getRgbF()[:3]]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_zero_bytes_stay_readable_inside_the_selection(qtbot, file_view, sample_file):
    """Zero bytes are drawn quieter than the others, but not grey on the selection's light blue: inside a selected
    range the darkest pixel of a "00" cell contrasts with its background at least 3:1."""
    from PySide6.QtGui import QColor

    hex_view = file_view.hex_view
    component = sample_file.tensor("model.embed.weight").components["data"]      # arange(15) as float32
    assert file_view.select_item(sample_file.tensor("model.embed.weight"), "data")
    zero = component.offset + 2                 # 0.0 is four zero bytes; the cursor outlines the first one
    assert hex_view.selection() == (component.offset, component.length)
    image = hex_view.viewport().grab().toImage()
    rect = hex_view.byte_rect(zero)
    background = image.pixelColor(rect.left() + 2, rect.top() + 2)
    pixels = [image.pixelColor(x, y) for x in range(rect.left() + 2, rect.right() - 2)
              for y in range(rect.top() + 2, rect.bottom() - 2)]
    darkest = min(pixels, key=QColor.lightnessF)
    assert _contrast(darkest, background) >= 3.0, (darkest.name(), background.name())


def test_go_to_offset_from_inspect_shows_the_bytes_and_selects_their_owner(qtbot, file_view, sample_file):
    tensor = sample_file.tensor("model.embed.weight")
    component = tensor.components["data"]
    file_view.inspect_tabs.setCurrentIndex(1)                    # the Inspect tab in front
    file_view.go_to_offset(component.offset + 8)
    assert file_view.inspect_tabs.currentIndex() == 0
    assert file_view.hex_view.cursor_offset() == component.offset + 8
    assert file_view.session.selection.tensor is tensor
