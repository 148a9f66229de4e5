"""Spy view wiring: density image and exact markers from the analysis layer, structure facts, per-row and
per-column profiles, COO axis selection, and dense tensors viewed as sparse."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from tests.gui.inspect_helpers import show_and_wait, wait_idle
from ztviewer.analysis.spy import spy_density_csr
from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray
from ztviewer.codec.sparse import load_sparse


def test_csr_from_the_corpus_shows_exact_markers_and_facts(qtbot, panel, corpus_dir):
    with open_file(corpus_dir / "zt_v1.0/ztensor-1.0.1/sparse.zt") as tf:
        tensor = show_and_wait(qtbot, panel, tf, "csr_f32_5x6")
        view = panel.sparse
        assert panel.stack.currentWidget() is view
        sparse = load_sparse(tf, tensor)
        rows, cols, values = view.current.markers
        dense = sparse.to_dense()
        assert len(rows) == sparse.nnz
        np.testing.assert_array_equal(values, dense[rows, cols])
        facts = view.prepared.facts
        assert facts.nnz == sparse.nnz and facts.shape == (5, 6)
        assert f"{sparse.nnz:,}" in view.facts.text()
        np.testing.assert_array_equal(view.prepared.rows[0], np.diff(sparse.indptr.astype(np.int64)))
        view._hovered((int(rows[0]), int(cols[0])))
        assert view.readout.text().startswith(f"[{rows[0]}, {cols[0]}] = ")
        view._hovered((4, 0))
        assert "no entry" in view.readout.text() or "=" in view.readout.text()


def test_empty_rows_and_nnz0_tensors(qtbot, panel, corpus_dir):
    with open_file(corpus_dir / "zt_v1.0/ztensor-1.0.1/sparse.zt") as tf:
        show_and_wait(qtbot, panel, tf, "csr_f64_emptyrows_6x4")
        assert panel.sparse.prepared.facts.empty_rows > 0
        show_and_wait(qtbot, panel, tf, "csr_i32_nnz0_3x3")
        assert panel.sparse.prepared.facts.nnz == 0


def test_large_csr_density_matches_analysis_and_zooms_to_markers(qtbot, panel, open_arrays):
    n = 5000
    idx = np.arange(n, dtype=np.uint64)
    tf = open_arrays({"eye": SparseArray("sparse_csr", (n, n), np.arange(1, n + 1, dtype=np.float32),
                                         indices=idx, indptr=np.arange(n + 1, dtype=np.uint64))})
    show_and_wait(qtbot, panel, tf, "eye")
    view = panel.sparse
    overview = view.prepared.overview
    assert overview.markers is None
    expected = spy_density_csr(np.arange(n + 1), idx, (n, n), None, overview.image.counts.shape)
    np.testing.assert_array_equal(overview.image.counts, expected.counts)
    assert view.prepared.facts.bandwidth == 0
    view.plot.view.setRange(QRectF(1000, 1000, 40, 30), padding=0)
    view.plot._settle.stop()
    view._range_settled()
    wait_idle(qtbot, view.detail_slot)
    rows, cols, values = view.current.markers
    assert np.all(rows == cols) and np.all(values == rows + 1)


def test_coo_rank3_axis_selection_and_projection(qtbot, panel, corpus_dir):
    with open_file(corpus_dir / "zt_v1.0/ztensor-1.0.1/sparse.zt") as tf:
        tensor = show_and_wait(qtbot, panel, tf, "coo_f64_2x3x4")
        view = panel.sparse
        assert view.axes.isVisibleTo(panel) and view.project.isVisibleTo(panel)
        coo = load_sparse(tf, tensor)
        coords = coo.coordinates()

        def entries_on(index: int) -> int:
            return int(np.count_nonzero(coords[0] == index))

        assert view.axes.axes() == (0, 1)
        view.axes.row_axis.setCurrentIndex(1)
        view.axes.col_axis.setCurrentIndex(2)
        qtbot.waitUntil(lambda: view.prepared is not None and not view.slot.busy)
        assert view.prepared.source.shape == (3, 4) and view.prepared.facts.nnz == entries_on(0)
        view.axes.set_index(0, 1)
        qtbot.waitUntil(lambda: view.prepared is not None and not view.slot.busy and view.axes.fixed() == {0: 1})
        qtbot.waitUntil(lambda: view.prepared.facts.nnz == entries_on(1))
        view.project.setChecked(True)
        qtbot.waitUntil(lambda: view.prepared is not None and view.prepared.facts.nnz == coo.nnz)


def test_one_dimensional_coo(qtbot, panel, corpus_dir):
    with open_file(corpus_dir / "zt_v1.0/ztensor-1.0.1/sparse.zt") as tf:
        show_and_wait(qtbot, panel, tf, "coo_u16_1d_10")
        assert panel.sparse.prepared.source.shape == (1, 10)


def test_dense_viewed_as_sparse(qtbot, panel, open_arrays):
    a = np.zeros((40, 50), np.float32)
    a[3, 4], a[10, 10], a[39, 0] = 1.5, -2.0, 7.0
    tf = open_arrays({"d": a})
    show_and_wait(qtbot, panel, tf, "d")
    panel.heatmap.sparse_button.click()
    view = panel.sparse
    assert panel.stack.currentWidget() is view and view.back_button.isVisibleTo(panel)
    qtbot.waitUntil(lambda: view.prepared is not None and not view.slot.busy)
    facts = view.prepared.facts
    assert facts.nnz == 3 and facts.lower_bandwidth == 39
    rows, cols, _values = view.current.markers
    assert sorted(zip(rows.tolist(), cols.tolist())) == [(3, 4), (10, 10), (39, 0)]
    view.back_button.click()
    assert panel.stack.currentWidget() is panel.heatmap
