"""Every shared-corpus file opens through the window; the tree equals the codec model; hostile files list
their problems in the Problems dock."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests._corpus import CORPUS, corpus_available
from tests.gui.window_helpers import open_in_window
from ztviewer.codec import open_file
from ztviewer.gui.models.tensor_tree import Column, TreeRole
from ztviewer.session.formatting import shape_text
from ztviewer.session.tree_columns import natural_order

SKIP_SUFFIXES = (".json", ".npy", ".md")


def corpus_files(folder: str | None = None) -> list[Path]:
    if not corpus_available():
        return []
    root = CORPUS / folder if folder else CORPUS
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in SKIP_SUFFIXES)


def ids(paths):
    return [str(p.relative_to(CORPUS)) for p in paths]


needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
VALID = [p for p in corpus_files() if "hostile" not in p.parts]
HOSTILE = corpus_files("hostile")


def tree_rows(view):
    """(name, dtype, shape, [(role, offset, length, encoding)]) per tensor row, in the tree's order."""
    model = view.tree_model
    file_index = model.file_index()
    result = []
    for row in range(model.rowCount(file_index)):
        index = model.index(row, 0, file_index)
        components = [model.item(model.index(r, 0, index)) for r in range(model.rowCount(index))]
        result.append((model.data(index), model.data(index.siblingAtColumn(Column.DTYPE)),
                       model.data(index.siblingAtColumn(Column.SHAPE)),
                       [(c.role, c.offset, c.length, c.encoding) for c in components]))
    return result


def codec_rows(tf):
    """The rows the tree shows at first: every tensor, by name in natural order (``layers.2`` before ``layers.10``;
    equal names in file order)."""
    tensors = [tf.tensors[i] for i in natural_order(tf.tensor_names())]
    return [(t.name, t.dtype, shape_text(t.shape), [(c.role, c.offset, c.length, c.encoding)
                                                    for c in t.components.values()]) for t in tensors]


@needs_corpus
@pytest.mark.parametrize("path", VALID, ids=ids(VALID))
def test_corpus_file_opens_and_the_tree_equals_the_codec_model(qtbot, qtmodeltester, window, path):
    view = open_in_window(qtbot, window, path)
    with open_file(path) as reference:
        assert view.tensor_file.format == reference.format
        assert tree_rows(view) == codec_rows(reference)
        assert view.problems_model.problems() == list(reference.all_problems())
    qtmodeltester.check(view.tree_model)
    qtmodeltester.check(view.proxy)
    qtmodeltester.check(view.problems_model)
    assert window.size_label.toolTip().startswith(f"{path.stat().st_size:,} bytes")
    covered = sum(s.length for s in view.layout_map.segments)
    assert covered == path.stat().st_size


@needs_corpus
@pytest.mark.parametrize("path", VALID, ids=ids(VALID))
def test_selecting_each_component_highlights_its_range(qtbot, window, path):
    view = open_in_window(qtbot, window, path)
    for tensor in view.tensor_file.tensors[:20]:
        for role, component in tensor.components.items():
            assert view.select_item(tensor, role)
            expected = (component.offset, component.length) if component.length else None
            assert view.hex_view.selection() == expected
            index = view.tree_model.index_of(tensor, role)
            assert view.tree_model.data(index, TreeRole.BYTE_RANGE) == (component.offset, component.length)


@needs_corpus
@pytest.mark.parametrize("path", HOSTILE, ids=ids(HOSTILE))
def test_hostile_file_opens_and_lists_its_problems(qtbot, qtmodeltester, window, path):
    view = open_in_window(qtbot, window, path)
    with open_file(path) as reference:
        expected = list(reference.all_problems())
        assert tree_rows(view) == codec_rows(reference)
    panel = window.problems_panel
    assert panel.model() is view.problems_model
    assert panel.model().problems() == expected
    assert panel.proxy.rowCount() == len(expected)
    errors = sum(p.is_error for p in expected)
    if expected:
        assert panel.summary.text().startswith(f"{errors} error")
    qtmodeltester.check(view.tree_model)
    qtmodeltester.check(view.problems_model)
    for row in range(min(panel.proxy.rowCount(), 5)):   # navigating to any problem is safe
        panel.activate_row(row)
    assert not window.last_error
