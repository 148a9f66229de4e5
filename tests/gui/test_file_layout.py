"""The whole-file layout behind the file map: coverage, padding, gaps, overlaps; clicks select owners."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from tests.gui.synthetic_files import Spec, build_file
from ztviewer.codec import Component, Region, Tensor, TensorFile
from ztviewer.codec.source import LocalFile
from ztviewer.session.file_layout import build_layout


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
    tf = TensorFile(str(path), "zt", tensors=tensors, regions=[Region("magic", 0, 8)], source=LocalFile(path))
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


def test_file_map_render_work_is_bounded_by_its_pixels_not_its_blobs(qtbot, tmp_path):
    from tests._work import lines_run
    from ztviewer.gui.views.file_map import FileMap

    def render(count: int) -> int:
        specs = [Spec(f"t{i}", parts={"data": b"\x01" * 8}, digest=None) for i in range(count)]
        tf = build_file(tmp_path / f"many{count}.zt", specs)
        file_map = FileMap()
        qtbot.addWidget(file_map)
        file_map.resize(800, 50)
        file_map.set_layout(build_layout(tf))
        image, lines = lines_run(lambda: file_map.grab().toImage())
        assert image.width() == 800
        tf.close()
        return sum(lines.values())

    render(3000)  # lazy imports and first-use caches
    assert render(12_000) <= 1.25 * render(3000)


def scattered_blobs_file(path, count: int = 3000):
    """Tiny blobs at 64-byte steps (zero padding between most, stray non-zero bytes between some), a hole
    wider than a page, and a second run past the first MiB: every way the padding reads are grouped."""
    data = bytearray(2 * (1 << 20) + 4096)
    components = []
    for i in range(count):
        base = 64 * i if i < count // 2 else (1 << 20) + 64 * i
        offset = base + 64 + (10_000 if i == count // 3 else 0)
        data[offset:offset + 7] = b"\x01" * 7
        if i % 17 == 0:
            data[offset + 20] = 0xAB          # inside the padding that follows the blob
        if i % 29 == 0:
            data[offset + 63] = 0xCD          # in the last byte before the next boundary
        components.append(Component("data", offset, 7))
    path.write_bytes(bytes(data))
    tensors = [Tensor(f"t{i}", "uint8", (7,), components={"data": c}, index=i) for i, c in enumerate(components)]
    return TensorFile(str(path), "zt", tensors=tensors, regions=[Region("magic", 0, 8)], source=LocalFile(path))


def test_padding_and_gaps_are_those_find_gaps_reports(tmp_path):
    from ztviewer.codec.layout_check import find_gaps

    tf = scattered_blobs_file(tmp_path / "scattered.bin")
    layout = build_layout(tf)
    unowned = [(s.kind, s.offset, s.length) for s in layout.segments if s.kind in ("padding", "gap")]
    assert unowned == [(g.kind, g.offset, g.length) for g in find_gaps(tf, tf.source, 64)]
    assert layout.count("gap") > 100 and layout.count("padding") > 1000
    assert layout.totals("blob") == (3000, 3000 * 7)
    tf.close()


def test_file_map_columns_pick_the_most_telling_segment(tmp_path):
    from ztviewer.gui.views.file_map import _PRIORITY
    from ztviewer.gui.views.file_map_columns import column_winners

    tf = scattered_blobs_file(tmp_path / "scattered.bin", count=400)
    layout = build_layout(tf)
    segments = layout.segments
    for width in (1, 7, 333, 1500):
        scale = width / layout.size
        spans = [(min(width - 1, int(s.offset * scale)), min(width - 1, int((s.end - 1) * scale))) for s in segments]
        expected = []
        for x in range(width):      # per column: highest priority among the segments meeting it, first on ties
            meeting = [i for i, (first, last) in enumerate(spans) if first <= x <= max(first, last)]
            expected.append(max(meeting, key=lambda i: (_PRIORITY.get(segments[i].kind, 2), -i), default=-1))
        assert column_winners(layout, width, _PRIORITY).tolist() == expected
    tf.close()


def test_zero_spans_reads_near_spans_together(tmp_path):
    import numpy as np

    from ztviewer.session.layout_padding import zero_spans

    path = tmp_path / "bytes.bin"
    data = bytearray(3 << 20)
    data[3000] = 1
    data[(1 << 20) + 3] = 2
    path.write_bytes(bytes(data))
    source = LocalFile(path)
    reads = []
    window = source.window
    source.window = lambda offset, length: reads.append((offset, length)) or window(offset, length)
    starts = np.array([0, 2990, 6000, (1 << 20) - 8, (1 << 20) + 2, (3 << 20) - 4], np.int64)
    ends = starts + np.array([64, 20, 64, 8, 2, 8])
    assert zero_spans(source, starts, ends).tolist() == [True, False, True, True, False, True]
    assert reads[0] == (0, 6064) and len(reads) == 4    # near spans together; a MiB boundary splits pieces
    source.close()


def test_layout_of_a_tensor_table_builds_no_tensor_and_matches_the_built_one(tmp_path):
    """A 2,000-tensor .zt read as a lazy table: its layout comes from the table's columns (no tensor built,
    start-up of a big file), the same segments and owners as when every tensor exists."""
    from benchmarks.files import MANY_TENSORS, many_zt
    from ztviewer.codec import open_file
    from ztviewer.codec.tensor_table import TensorTable

    path, count, _, _ = many_zt(tmp_path, quick=True)
    lazy = open_file(path)
    assert isinstance(lazy.tensors, TensorTable) and count == MANY_TENSORS[True]
    layout = build_layout(lazy)
    assert lazy.tensors._built == 0
    built = open_file(path)
    list(built.tensors)                  # every tensor built: the layout is found tensor by tensor
    expected = build_layout(built)
    middle = built.tensors[count // 2].components["data"]
    assert layout.segment_at(middle.offset).owner == expected.segment_at(middle.offset).owner
    assert lazy.tensors._built == 1      # the owner's tensor, asked for
    assert layout.segments == expected.segments and layout.count("blob") == count


def test_layout_asks_a_table_for_its_spans_once(tmp_path, monkeypatch):
    """Asking a table whether its tensors are as listed walks every tensor built so far (a verified file has
    built them all): the layout asks once, for its blobs and its padding alignment alike."""
    from benchmarks.files import many_zt
    from ztviewer.codec import open_file
    from ztviewer.codec.tensor_table import TensorTable

    path, count, _, _ = many_zt(tmp_path, quick=True)
    tf = open_file(path)
    for tensor in tf.tensors:
        tensor.components                # noqa: B018  # built, as a verification leaves them
    calls = []
    plain_spans = TensorTable.plain_spans
    monkeypatch.setattr(TensorTable, "plain_spans", lambda table: calls.append(1) or plain_spans(table))
    layout = build_layout(tf)
    assert len(calls) == 1 and layout.count("blob") == count
    tf.close()
