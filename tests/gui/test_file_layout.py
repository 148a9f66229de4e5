"""The whole-file layout behind the file map: coverage, padding, gaps, overlaps; clicks select owners."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from synthetic_files import Spec, build_file
from ztviewer.codec import Component, Region, Tensor, TensorFile
from ztviewer.codec.source import Source
from ztviewer.gui.file_layout import build_layout


def test_segments_cover_every_byte_once(sample_file):
    layout = build_layout(sample_file)
    assert layout.segments[0].offset == 0
    for a, b in zip(layout.segments, layout.segments[1:], strict=False):
        assert a.end == b.offset
    assert layout.segments[-1].end == sample_file.size
    kinds = {s.kind for s in layout.segments}
    assert {"magic", "padding", "blob", "manifest", "footer"} <= kinds
    assert layout.count("gap") == 0 and layout.count("overlap") == 0


def test_blob_segments_name_their_owner(sample_file):
    layout = build_layout(sample_file)
    tensor = sample_file.tensor("sparse.csr")
    component = tensor.components["values"]
    segment = layout.segment_at(component.offset + 3)
    assert (segment.kind, segment.offset, segment.length) == ("blob", component.offset, component.length)
    assert (segment.owner.tensor_index, segment.owner.role) == (tensor.index, "values")
    assert layout.padding_after(component.end) == 0           # the manifest follows the last blob directly
    embed = sample_file.tensor("model.embed.weight").components["data"]   # 60 bytes at 0x100
    assert layout.padding_after(embed.end) == 4


def test_gaps_overlaps_and_ranges_past_the_end(tmp_path):
    path = tmp_path / "odd.bin"
    data = bytearray(256)
    data[150:160] = b"\xff" * 10          # non-zero bytes nobody claims
    path.write_bytes(bytes(data))
    tensors = [Tensor("a", "uint8", (40,), components={"data": Component("data", 64, 40)}, index=0),
               Tensor("b", "uint8", (40,), components={"data": Component("data", 80, 8)}, index=1),
               Tensor("c", "uint8", (400,), components={"data": Component("data", 192, 400)}, index=2)]
    tf = TensorFile(str(path), "zt", tensors=tensors, regions=[Region("magic", 0, 8)], source=Source(path))
    layout = build_layout(tf)
    overlap = layout.segment_at(84)
    assert overlap.kind == "overlap" and overlap.offset == 80 and overlap.length == 8
    assert {o.tensor_index for o in overlap.owners} == {0, 1}
    assert layout.segment_at(104).kind == "padding"     # zeros up to the next 64-byte boundary
    assert layout.segment_at(150).kind == "gap"
    assert layout.segment_at(8).kind == "padding"
    assert layout.segments[-1].end == 256 and layout.segment_at(255).owner.tensor_index == 2
    tf.close()


def test_clicking_the_file_map_selects_the_owning_component(qtbot, file_view, sample_file):
    tensor = sample_file.tensor("model.embed.weight")
    component = tensor.components["data"]
    file_map = file_view.file_map
    x = file_map.x_of(component.offset + component.length // 2)
    qtbot.mouseClick(file_map, Qt.MouseButton.LeftButton, pos=QPoint(int(x), int(file_map.bar_rect().center().y())))
    assert file_view.current_item() is component
    assert component.offset <= file_view.hex_view.cursor_offset() < component.end


def test_clicking_a_structural_region_highlights_it(qtbot, file_view, sample_file):
    file_map = file_view.file_map
    manifest = next(r for r in sample_file.regions if r.kind == "manifest")
    x = file_map.x_of(manifest.offset + manifest.length // 2)
    qtbot.mouseClick(file_map, Qt.MouseButton.LeftButton, pos=QPoint(int(x), int(file_map.bar_rect().center().y())))
    assert file_view.current_item() is sample_file
    assert file_view.hex_view.selection() == (manifest.offset, manifest.length)


def test_file_map_renders_many_tiny_blobs_quickly(qtbot, tmp_path):
    import time

    from ztviewer.gui.views.file_map import FileMap

    tf = build_file(tmp_path / "many.zt", [Spec(f"t{i}", parts={"data": b"\x01" * 8}, digest=None) for i in range(3000)])
    file_map = FileMap()
    qtbot.addWidget(file_map)
    file_map.resize(800, 50)
    file_map.set_layout(build_layout(tf))
    start = time.perf_counter()
    image = file_map.grab().toImage()
    assert time.perf_counter() - start < 1.0
    assert image.width() == 800
    tf.close()
