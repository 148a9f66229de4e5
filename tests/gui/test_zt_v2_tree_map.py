"""zTensor v2 files in the window: the tree (objects → parts, every column), the file map's regions (shared
blobs once with every owner, seek tables inside their part, superseded manifests and footers) and the
properties (content id, footer, generations)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.v2_files import (
    conformance_files,
    corpus_files,
    tied_and_seekable,
    with_generations,
)
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import open_file
from ztviewer.codec.formats.zt_v2 import content_digest, object_content_digest
from ztviewer.codec.zstd_seekable import SeekableStream
from ztviewer.gui.file_view import FileView
from ztviewer.gui.models.tree_roles import Column
from ztviewer.session import properties
from ztviewer.session.file_layout import build_layout
from ztviewer.workers.tasks import OpenedFile

V2_FILES = [*conformance_files(), *corpus_files()]


def _view(qtbot, tf) -> FileView:
    view = FileView(OpenedFile(tf, build_layout(tf)))
    qtbot.addWidget(view)
    view.resize(1400, 700)
    view.show()
    return view


def _props(rows, path: str):
    """The value of the property at ``path`` ("zTensor v2/footer/manifest length")."""
    head, _, rest = path.partition("/")
    for row in rows:
        if row.key == head:
            return row.value if not rest else _props(row.children, rest)
    raise KeyError(path)


@pytest.mark.parametrize("path", V2_FILES, ids=lambda p: p.name)
def test_every_v2_file_shows_its_objects_and_parts(qtbot, path):
    with open_file(path) as tf:
        view = _view(qtbot, tf)
        model = view.tree_model
        file_row = model.file_index()
        assert model.index(0, Column.LAYOUT, file_row.parent()).data().startswith("zTensor v2")
        assert model.rowCount(file_row) == len(tf.tensors)
        for tensor in tf.tensors:
            for role, component in tensor.components.items():
                index = model.index_of(tensor, role)
                row = {c: model.index(index.row(), c, index.parent()) for c in Column}
                assert row[Column.NAME].data() == role
                assert row[Column.ENCODING].data() == component.encoding
                assert row[Column.OFFSET].data().startswith(f"0x{component.offset:X}")
                expected_digest = "unchecked" if component.digest else "—"
                assert row[Column.DIGEST].data() == expected_digest
                if component.digest:
                    assert "decoded bytes" in row[Column.DIGEST].data(Qt.ItemDataRole.ToolTipRole)
                logical = component.extra.get("type")
                assert row[Column.DTYPE].data() == (f"{component.dtype} ({logical})" if logical else component.dtype)
        props = view.properties()
        assert _props(props, "File/format") == "zt-v2"
        if not tf.extra.get("data_shard"):
            assert _props(props, "zTensor v2/content id") == (content_digest(tf) or properties.NO_CONTENT_ID)
        length = tf.extra["footer"]["manifest_length"]
        assert _props(props, "zTensor v2/footer/manifest length").startswith(f"{length:,}")
        view.shutdown()


def test_a_shared_blob_is_drawn_once_with_every_owner(qtbot, tmp_path):
    with open_file(tied_and_seekable(tmp_path / "tied.zt")) as tf:
        layout = build_layout(tf)
        embed, head = tf.tensor("embed.weight"), tf.tensor("lm_head.weight")
        blob = embed.components["data"]
        shared = [s for s in layout.segments if s.kind == "shared"]
        assert len(shared) == 1 and (shared[0].offset, shared[0].length) == (blob.offset, blob.length)
        assert [o.label for o in shared[0].owners] == ["embed.weight", "lm_head.weight"]
        assert "shared by embed.weight, lm_head.weight" in shared[0].describe()
        assert layout.count("overlap") == 0
        view = _view(qtbot, tf)
        index = view.tree_model.index_of(head, "data", Column.OFFSET)
        assert index.data().endswith("⇄")
        assert "embed.weight/data" in index.data(Qt.ItemDataRole.ToolTipRole)
        unshared = view.tree_model.index_of(tf.tensor("bias"), "data", Column.OFFSET)
        assert "⇄" not in unshared.data()
        view.select_item(head, "data")
        component = _props(view.properties(), "Component/shared blob")
        assert component == "2 owners"
        owners = next(r for r in next(p for p in view.properties() if p.key == "Component").children
                      if r.key == "shared blob").children
        assert [o.value for o in owners] == ["lm_head.weight/data (this part)", "embed.weight/data"]
        view.select_item(embed)
        assert "lm_head.weight/data" in _props(view.properties(), "Manifest/shared blobs/data")
        view.shutdown()


def test_the_seek_table_is_its_own_region_inside_the_part(qtbot, tmp_path):
    with open_file(tied_and_seekable(tmp_path / "tied.zt")) as tf:
        big = tf.tensor("big")
        part = big.components["data"]
        stream = SeekableStream(tf.source.view(part.offset, part.length), part.uncompressed_length)
        table_start = part.offset + stream.frames[-1].stored_offset + stream.frames[-1].stored_length
        layout = build_layout(tf)
        blob, table = layout.segments_in(part.offset, part.end)
        assert (blob.kind, blob.offset, blob.end) == ("blob", part.offset, table_start)
        assert (table.kind, table.offset, table.end) == ("seek-table", table_start, part.end)
        assert table.owner.tensor_index == big.index and table.owner.role == "data"
        assert tf.source.read(table_start, 4) == (0x184D2A5E).to_bytes(4, "little")   # the skippable frame
        view = _view(qtbot, tf)
        view._on_segment_clicked(table, table.offset)        # a click on the table selects its part
        assert view.current_item() is part
        rows = next(p for p in view.properties() if p.key == "Component").children
        values = {r.key: r.value for r in rows}
        assert values["frames"].startswith(f"{len(stream.frames):,} × 1,048,576 bytes")
        assert values["seek table"].endswith(f"{part.end - table_start:,} bytes")
        assert values["digest covers"].startswith("the decoded bytes")
        view.shutdown()


def test_earlier_generations_are_drawn_and_listed(qtbot, window, tmp_path):
    path = with_generations(tmp_path / "gen.zt")
    view = open_in_window(qtbot, window, path)
    tf = view.tensor_file
    layout = view.layout_map
    old = [s for s in layout.segments if s.kind in ("old-manifest", "old-footer")]
    assert [s.kind for s in old] == ["old-manifest", "old-footer"] * 2
    assert [s.owner.label for s in old][::2] == ["superseded manifest of generation 1",
                                                 "superseded manifest of generation 2"]
    generations = tf.extra["_generations"]
    assert [s.end for s in old][1::2] == sorted(g.end for g in generations)
    assert window.format_label.text() == "zTensor v2, 3 generations"
    props = view.properties()
    assert _props(props, "zTensor v2/generations") == "3 (this one and 2 earlier)"
    assert _props(props, "zTensor v2/generations/generation 3").endswith("— current")
    assert _props(props, "zTensor v2/generations/generation 1").startswith("1 object, ")
    assert "content_digest:sha256" not in str([p.key for p in props])


def test_object_content_ids_in_properties(qtbot, tmp_path):
    with open_file(with_generations(tmp_path / "gen.zt")) as tf:
        view = _view(qtbot, tf)
        for tensor in tf.tensors:
            view.select_item(tensor)
            assert _props(view.properties(), "Manifest/content id") == object_content_digest(tensor)
            assert object_content_digest(tensor).startswith("sha256:")
        view.shutdown()
