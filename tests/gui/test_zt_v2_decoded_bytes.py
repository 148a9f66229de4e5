"""Decoded bytes of compressed parts in the hex view and the data inspector: a zt.zstd-seekable/1 part decodes
only the frames shown (counted, not timed); other parts are decoded whole when small, refused otherwise."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.gui.v2_files import conformance, tied_and_seekable
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.session.decoded_part import DecodedPart, why_not_decodable

MIB = 1 << 20


def _expected(rows: int = 300) -> bytes:
    return (np.arange(rows * 4096, dtype=np.float32) % 251).tobytes()


def test_a_window_decodes_only_the_frames_covering_it(tmp_path):
    with open_file(tied_and_seekable(tmp_path / "t.zt")) as tf:
        big = tf.tensor("big")
        part = DecodedPart(tf, big, big.components["data"])
        expected = _expected()
        assert part.size == len(expected) and part.frame_count == 5 and part.frames_decoded == 0
        assert part.window(MIB + 16, 600) == expected[MIB + 16:MIB + 616]
        assert part.frames_decoded == 1                      # frame 1 only
        assert part.window(MIB + 4096, 64) == expected[MIB + 4096:MIB + 4160]
        assert part.frames_decoded == 1                      # kept: nothing decoded again
        assert part.window(2 * MIB - 8, 16) == expected[2 * MIB - 8:2 * MIB + 8]
        assert part.frames_decoded == 2                      # the window crosses into frame 2
        assert part.window(len(expected) - 10, 100) == expected[-10:]
        assert part.frames_decoded == 3                      # the last frame, clipped at the end
        assert sorted(part._frames) == [1, 2, 4]
        part.window(2 * MIB, 1)                               # kept
        part.window(0, 1)                                     # new; three frames kept at most: 1 goes
        assert part.frames_decoded == 4 and sorted(part._frames) == [0, 2, 4]


def test_the_hex_view_and_inspector_show_decoded_bytes(qtbot, window, tmp_path):
    path = tied_and_seekable(tmp_path / "t.zt")
    view = open_in_window(qtbot, window, path)
    page = view.decoded_bytes
    big = view.tensor_file.tensor("big")
    component = big.components["data"]
    view.select_item(view.tensor_file.tensor("bias"), "data")
    assert not page.bar.isVisibleTo(page)                 # a raw part: nothing to decode
    view.select_item(big, "data")
    assert page.bar.isVisibleTo(page) and page.check.isEnabled() and not page.showing_decoded
    assert view.hex_view.size_bytes == view.tensor_file.size
    page.check.setChecked(True)
    part = page.part
    assert view.hex_view.size_bytes == 4096 * 300 * 4 and view.shown_source is part
    assert "decoded: 4,915,200 bytes (5 frames; stored 3,211 bytes)" in page.info.text()
    view.hex_view.set_cursor(3 * MIB + 4 * 1000)
    view.hex_view.repaint()
    assert part.frames_decoded <= 3                       # the first screen (frame 0) and frame 3, nothing else
    decoded_frames = set(part._frames)
    assert 3 in decoded_frames and not decoded_frames - {0, 3}
    inspector = window.inspector
    shown = inspector.position.text()
    assert shown.startswith("Decoded bytes at 0x") and shown.endswith("· big · data")
    value = struct.unpack("<f", _expected()[3 * MIB + 4000:3 * MIB + 4004])[0]
    assert float(inspector.value_text("f32").replace(",", "")) == value
    view.select_owner_of(0)                                 # decoded offsets are not the file's: no owner to select
    assert view.current_item() is component
    page.check.setChecked(False)
    assert view.shown_source is view.tensor_file.source and view.hex_view.size_bytes == view.tensor_file.size
    assert view.hex_view.selection() == (component.offset, component.length)
    page.check.setChecked(True)
    view.select_item(view.tensor_file.tensor("bias"))     # leaving the part shows the file again
    assert view.shown_source is view.tensor_file.source and not page.showing_decoded
    view.select_item(big, "data")                           # the switch stays on for the next compressed part
    assert page.showing_decoded and page.part is not part


def test_a_small_zstd_part_is_decoded_whole(tmp_path):
    path = tmp_path / "z.zt"
    values = np.arange(1000, dtype=np.float32)
    save_arrays(path, {"z": values}, "zt", compress=("zstd", 3))
    with open_file(path) as tf:
        tensor = tf.tensor("z")
        component = tensor.components["data"]
        assert component.encoding == "zstd"
        part = DecodedPart(tf, tensor, component)
        assert part.frame_count == 1 and part.window(400, 8) == values.tobytes()[400:408]


def test_parts_that_cannot_be_decoded_say_why(qtbot, window, tmp_path):
    with open_file(conformance("view-unknown-encoding-refused.zt")) as tf:
        tensor = tf.tensor("t")
        reason = why_not_decodable(tensor, tensor.components["data"])
        assert "x.z/1" in reason and "unknown" in reason
        with pytest.raises(ValueError, match=r"x\.z/1"):
            DecodedPart(tf, tensor, tensor.components["data"])
    view = open_in_window(qtbot, window, conformance("view-unknown-encoding-refused.zt"))
    view.select_item(view.tensor_file.tensor("t"), "data")
    page = view.decoded_bytes
    assert page.bar.isVisibleTo(page) and not page.check.isEnabled() and "x.z/1" in page.check.toolTip()
