"""File ▸ Compare…: the Compare tab over pairs built with the codec writers and safetensors (perturb one tensor by
a known amount, rename, delete, bfloat16): rows, verdicts, numbers shown, filter and sort, the attribute
changes, linked zoom of A / B / Δ, and jump-to-worst."""
from __future__ import annotations

import os

import numpy as np
import pytest
from PySide6.QtCore import QModelIndex, QRectF, Qt
from safetensors.numpy import save_file

from ztviewer.analysis.diff import AttrKind
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays
from ztviewer.codec.dtypes import to_float32
from ztviewer.gui.compare.attributes_model import AttributeChangesModel
from ztviewer.gui.compare.compare_view import CompareView
from ztviewer.gui.compare.pairs_model import FIRST_B, FIRST_METRIC, HEADERS
from ztviewer.gui.compare.worst_model import WorstModel
from ztviewer.gui.main_window import MainWindow

BUMP = (0.5, (10, 20))          # layer.w[10, 20] += 0.5 in B
CUBE_BUMP = (2.0, (2, 7, 9))    # layer.cube[2, 7, 9] += 2.0 in B


def save_bits(path, tensors, metadata):
    """safetensors writing a dtype numpy lacks (bfloat16 given as uint16 bits)."""
    from safetensors import serialize_file
    from safetensors._safetensors_rust import TensorSpec

    arrays = {name: np.ascontiguousarray(array) for name, (_, array) in tensors.items()}
    specs = {name: TensorSpec(dtype=dtype, shape=list(arrays[name].shape), data_ptr=arrays[name].ctypes.data,
                              data_len=arrays[name].nbytes) for name, (dtype, _) in tensors.items()}
    serialize_file(specs, str(path), metadata=metadata)


@pytest.fixture
def checkpoints(tmp_path):
    """A (zTensor, codec writer) and B (safetensors): one tensor perturbed, one 3-D tensor perturbed, one
    renamed, one deleted, one added, one quantised to bfloat16, one unchanged; attributes changed."""
    rng = np.random.default_rng(3)
    arrays = {"layer.w": rng.standard_normal((64, 48)).astype(np.float32),
              "layer.cube": rng.standard_normal((3, 40, 30)).astype(np.float32),
              "emb": rng.standard_normal((100, 16)).astype(np.float32),
              "gone": np.arange(10, dtype=np.int32),
              "q": rng.standard_normal((8, 8)).astype(np.float32),
              "same": np.ones(5, np.float32)}
    a = tmp_path / "a.zt"
    save_arrays(a, arrays, "zt", attributes={"step": "1", "name": "a"}, tensor_attributes={"layer.w": {"scale": "1"}})
    w = arrays["layer.w"].copy()
    w[BUMP[1]] += BUMP[0]
    cube = arrays["layer.cube"].copy()
    cube[CUBE_BUMP[1]] += CUBE_BUMP[0]
    q_bits = ((arrays["q"].view(np.uint32) + 0x8000) >> 16).astype(np.uint16)
    b = tmp_path / "b.safetensors"
    save_bits(b, {"layer.w": ("float32", w), "layer.cube": ("float32", cube), "embedding": ("float32", arrays["emb"]),
                  "new": ("float32", np.zeros(3, np.float32)), "q": ("bfloat16", q_bits),
                  "same": ("float32", arrays["same"])}, {"step": "2", "extra": "x"})
    return a, b, arrays, {"layer.w": w, "layer.cube": cube, "q": to_float32(q_bits, "bfloat16")}


def run_compare(qtbot, a, b) -> CompareView:
    view = CompareView(str(a), str(b))
    qtbot.addWidget(view)
    view.resize(1400, 900)
    view.show()
    view.start()
    qtbot.waitUntil(lambda: view.session.state == "done", timeout=20_000)
    return view


def leaves(model, parent=None) -> list:
    """The pair rows (not the groups) in display order."""
    parent = parent if parent is not None else QModelIndex()
    found = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        found.extend(leaves(model, index) if model.group(index) is not None else [index])
    return found


def rows(view: CompareView) -> dict[str, list[str]]:
    model = view.model
    out = {}
    for index in leaves(model):
        cells = [index.siblingAtColumn(c).data() for c in range(model.columnCount())]
        out[cells[0] or cells[FIRST_B + 1]] = cells
    return out


def select(qtbot, view: CompareView, name: str) -> None:
    assert view.select_name(name)
    qtbot.waitUntil(lambda: view.pair_view.data is not None, timeout=10_000)


def test_rows_verdicts_and_numbers(qtbot, checkpoints):
    a, b, arrays, changed = checkpoints
    view = run_compare(qtbot, a, b)
    shown = rows(view)
    status = {name: cells[FIRST_B] for name, cells in shown.items()}
    assert status == {"layer.w": "different", "layer.cube": "different", "emb": "identical", "gone": "only in A",
                      "q": "different", "same": "identical", "new": "only in B"}
    assert shown["emb"][FIRST_B + 1] == "embedding" and "renamed" in shown["emb"][-1]
    assert shown["gone"][FIRST_B + 1] == "" and shown["new"][0] == ""          # one-sided rows blank on the other
    assert shown["q"][FIRST_B + 2] == "bfloat16" and "dtype float32 → bfloat16" in shown["q"][-1]
    metric = {h: FIRST_METRIC + k for k, h in enumerate(HEADERS[FIRST_METRIC:-1])}
    w = shown["layer.w"]
    delta = np.float64(changed["layer.w"][BUMP[1]]) - np.float64(arrays["layer.w"][BUMP[1]])
    assert w[metric["max |Δ|"]] == f"{delta:.4g} @[10,20]"
    assert w[metric["differing"]] == "1"
    expected_rel = abs(delta) / np.linalg.norm(arrays["layer.w"].astype(np.float64))
    assert w[metric["rel L2"]] == f"{expected_rel:.4g}"
    q = view.session.pairs[[p.name for p in view.session.pairs].index("q")].stats
    assert q.max_abs == pytest.approx(float(np.abs(changed["q"].astype(np.float64) - arrays["q"]).max()), rel=1e-12)
    assert "differences found" in view.summary.text()
    view.shutdown()


def test_filter_and_sort_by_metric(qtbot, checkpoints):
    a, b, _, _ = checkpoints
    view = run_compare(qtbot, a, b)
    view.only_differences.setChecked(True)
    names = [i.data() or i.siblingAtColumn(FIRST_B + 1).data() for i in leaves(view.model)]
    assert sorted(names) == ["emb", "gone", "layer.cube", "layer.w", "new", "q"]  # a rename counts as a difference
    view.tree_b.sortByColumn(FIRST_METRIC, Qt.SortOrder.DescendingOrder)    # max |Δ|, largest first
    assert view.session.sort_key == "max |Δ|" and view.session.descending
    first = [i.data() for i in leaves(view.model)[:3]]
    assert first == ["layer.cube", "layer.w", "q"]
    view.only_differences.setChecked(False)
    assert len(leaves(view.model)) == 7
    view.shutdown()


def test_models_pass_qtmodeltester(qtbot, qtmodeltester, checkpoints):
    a, b, _, _ = checkpoints
    view = CompareView(str(a), str(b))
    qtbot.addWidget(view)
    qtmodeltester.check(view.model, force_py=True)          # keeps checking while rows arrive
    view.start()
    qtbot.waitUntil(lambda: view.session.state == "done", timeout=20_000)
    view.session.set_sort("rel L2", True)
    view.session.set_only_differences(True)
    view.session.set_sort(None)
    qtmodeltester.check(view.model, force_py=True)
    qtmodeltester.check(view.attributes_model, force_py=True)
    worst = WorstModel()
    worst.set_pair(view.session.pairs[0])
    qtmodeltester.check(worst, force_py=True)
    view.shutdown()


def test_attribute_changes(qtbot, checkpoints):
    a, b, _, _ = checkpoints
    view = run_compare(qtbot, a, b)
    model: AttributeChangesModel = view.attributes_model
    found = {(model.index(r, 0).data(), model.index(r, 1).data()): model.item(model.index(r, 0))[1]
             for r in range(model.rowCount())}
    assert found[("(file)", "step")].kind is AttrKind.CHANGED
    assert model.index(list(found).index(("(file)", "step")), 3).data() == "'1'"
    assert found[("(file)", "name")].kind is AttrKind.REMOVED and found[("(file)", "extra")].kind is AttrKind.ADDED
    assert found[("layer.w", "scale")].kind is AttrKind.REMOVED
    view.shutdown()


def test_heatmaps_zoom_together(qtbot, checkpoints):
    a, b, _, _ = checkpoints
    view = run_compare(qtbot, a, b)
    select(qtbot, view, "layer.w")
    maps = view.pair_view.heatmaps
    assert maps["Δ"].data is not None and maps["Δ"].data.value(BUMP[1]) == pytest.approx(BUMP[0], rel=1e-6)
    maps["B"].image.view.setRange(QRectF(5, 7, 10, 6), padding=0)
    for side in ("A", "Δ"):
        (x0, x1), (y0, y1) = view.pair_view.view_range(side)
        assert (x0, x1, y0, y1) == pytest.approx((5, 15, 7, 13), abs=1e-6)
    view.shutdown()


def test_jump_to_worst_in_3d(qtbot, checkpoints):
    a, b, arrays, changed = checkpoints
    view = run_compare(qtbot, a, b)
    select(qtbot, view, "layer.cube")
    pair_view = view.pair_view
    assert pair_view.worst_model.rowCount() == 1
    assert pair_view.worst_model.index(0, 1).data() == "[2, 7, 9]"
    assert pair_view.axes.fixed() == {0: 0}
    pair_view.worst.clicked.emit(pair_view.worst_model.index(0, 0))
    assert view.session.plane.fixed == ((0, 2),) and view.session.focus == CUBE_BUMP[1]
    for side in ("A", "B", "Δ"):
        assert pair_view.heatmaps[side].axes.fixed() == {0: 2}          # the same slice in all three
    def centred() -> None:
        (x0, x1), (y0, y1) = pair_view.view_range("Δ")
        assert (x0 + x1) / 2 == pytest.approx(9) and (y0 + y1) / 2 == pytest.approx(7) and x1 - x0 <= 17

    qtbot.waitUntil(centred, timeout=5000)
    text = pair_view.values.text()
    assert f"{arrays['layer.cube'][CUBE_BUMP[1]]:.7g}" in text and f"{changed['layer.cube'][CUBE_BUMP[1]]:.7g}" in text
    assert pair_view.histogram.curves["A"].yData.sum() == arrays["layer.cube"].size
    view.shutdown()


def test_window_compare_tab_and_drop(qtbot, checkpoints, tmp_path):
    from tests.gui.test_main_window import drop

    a, b, _, _ = checkpoints
    window = MainWindow()
    qtbot.addWidget(window)
    window.show()
    window.actions_.compare.trigger()
    dialog = window.findChild(type(window), None) or next(w for w in window.children()
                                                        if w.objectName() == "compareDialog")
    dialog.edits["A"].setText(str(a))
    dialog.edits["B"].setText(str(b))
    dialog.accept()
    qtbot.waitUntil(lambda: window.opener.compare_views() and window.opener.compare_views()[0].session.state == "done",
                    timeout=20_000)
    assert window.tabs.tabText(window.tabs.currentIndex()) == "a.zt ⇄ b.safetensors"
    drop(window, [b, a])
    qtbot.waitUntil(lambda: len(window.opener.compare_views()) == 2, timeout=5000)
    second = window.opener.compare_views()[1]
    assert second.session.path_a == os.path.abspath(b)
    qtbot.waitUntil(lambda: second.session.state == "done", timeout=20_000)
    window.close_tab(window.tabs.indexOf(second))
    assert len(window.opener.compare_views()) == 1
    window.close()


def test_command_line_compare_option():
    import argparse

    from ztviewer import launch

    captured = {}

    def fake(files, new_instance=False, compare=None):
        captured.update(files=files, compare=compare)
        return 0

    from ztviewer.gui import app
    original = app.main
    app.main = fake
    try:
        assert launch.launch_gui(["--compare", "x.zt", "y.safetensors"]) == 0
    finally:
        app.main = original
    assert captured == {"files": [], "compare": ["x.zt", "y.safetensors"]}
    assert isinstance(argparse.ArgumentParser, type)


def test_cancel_keeps_the_rows_so_far(qtbot, tmp_path, monkeypatch):
    import time

    from ztviewer.workers import compare as compare_worker

    real = compare_worker.iter_pair_diffs

    def paced(*args, cancelled=None, **kw):
        """Hold after 5 pairs until the cancel arrives (a fast machine would finish all 200 first)."""
        for count, pair in enumerate(real(*args, cancelled=cancelled, **kw), 1):
            yield pair
            deadline = time.monotonic() + 10
            while count >= 5 and cancelled is not None and not cancelled() and time.monotonic() < deadline:
                time.sleep(0.005)

    monkeypatch.setattr(compare_worker, "iter_pair_diffs", paced)
    monkeypatch.setattr(compare_worker, "BATCH_SECONDS", 0.0)
    arrays = {f"t{k:03d}": np.full((64, 64), k, np.float32) for k in range(200)}
    save_file(arrays, str(tmp_path / "a.safetensors"))
    save_file({k: v + 1 for k, v in arrays.items()}, str(tmp_path / "b.safetensors"))
    view = CompareView(str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors"))
    qtbot.addWidget(view)
    view.session.pairs_added.connect(lambda _n: view.cancel())   # cancel as soon as the first rows arrive
    view.start()
    qtbot.waitUntil(lambda: view.session.state == "cancelled", timeout=20_000)
    assert 0 < len(leaves(view.model)) == len(view.session.pairs) < 200
    assert not view.cancel_button.isEnabled() and "cancelled" in view.summary.text()
    view.shutdown()


def test_focus_marker_follows_the_element(qtbot, checkpoints):
    a, b, _, _ = checkpoints
    view = run_compare(qtbot, a, b)
    select(qtbot, view, "layer.w")
    pair_view = view.pair_view
    view.session.jump_to(BUMP[1])
    xs, ys = pair_view.markers["B"].getData()
    assert pair_view.markers["B"].isVisible() and (xs.min(), xs.max(), ys.min(), ys.max()) == (19.5, 20.5, 9.5, 10.5)
    view.session.select(None)
    assert not pair_view.markers["Δ"].isVisible()
    view.shutdown()


def test_a_and_b_share_colour_levels(qtbot, tmp_path):
    """A in [0, 1) alone would get viridis over [0, 1]; B = 10·A − 5 is signed. Linked (the default), both use
    one diverging map and the same levels from both samples; Δ is symmetric about 0. Unlinked, each its own."""
    rng = np.random.default_rng(5)
    base = rng.random((40, 30)).astype(np.float32)
    save_arrays(tmp_path / "a.zt", {"w": base}, "zt")
    save_file({"w": base * 10 - 5}, str(tmp_path / "b.safetensors"))
    view = run_compare(qtbot, tmp_path / "a.zt", tmp_path / "b.safetensors")
    select(qtbot, view, "w")
    pair = view.pair_view
    heatmaps = pair.heatmaps
    qtbot.waitUntil(lambda: all(heatmaps[s].base is not None for s in ("A", "B", "Δ")), timeout=10_000)
    assert pair.link_levels.isChecked()
    assert pair.levels("A") == pair.levels("B")
    low, high = pair.levels("A")
    magnitudes = np.abs(np.concatenate([base.ravel(), (base * 10 - 5).ravel()]).astype(np.float64))
    assert low == -high and high == pytest.approx(np.percentile(magnitudes, 99.9, method="higher"))
    assert high > 4.9                                            # B's range, not A's [0, 1)
    assert heatmaps["A"].image.colormap_name == heatmaps["B"].image.colormap_name == "blue–white–red"
    d_low, d_high = pair.levels("Δ")
    assert d_low == -d_high > -np.inf and d_high > 0
    pair.link_levels.setChecked(False)
    a_low, a_high = pair.levels("A")
    assert heatmaps["A"].image.colormap_name == "viridis"
    assert 0 <= a_low < 0.01 and 0.99 < a_high <= 1
    assert pair.levels("B") != (a_low, a_high)
    pair.link_levels.setChecked(True)
    assert pair.levels("A") == pair.levels("B") == (low, high)
    view.shutdown()


def _csr(dense: np.ndarray) -> SparseArray:
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=dense.shape[0]))]).astype(np.uint64)
    return SparseArray("sparse_csr", dense.shape, dense[rows, cols], indices=cols.astype(np.uint64), indptr=indptr)


@pytest.fixture
def sparse_pairs(tmp_path):
    """``s``: CSR in both, one value changed, one entry added, one removed; ``m``: CSR in A, dense in B;
    ``c``: a rank-3 COO in both with one value changed."""
    rng = np.random.default_rng(7)
    a_dense = np.where(rng.random((60, 50)) < 0.05, rng.standard_normal((60, 50)), 0).astype(np.float32)
    b_dense = a_dense.copy()
    r, c = np.argwhere(a_dense)[3]
    b_dense[r, c] += 1.5                                      # changed
    b_dense[0, 49] = 7.0 if a_dense[0, 49] == 0 else a_dense[0, 49] + 7.0   # added (or changed)
    r2, c2 = np.argwhere(a_dense)[-1]
    b_dense[r2, c2] = 0.0                                     # removed
    m_b = a_dense.copy()
    m_b[5, 5] -= 2.0
    coords = np.array([[0, 1, 2, 2], [1, 3, 0, 4], [2, 2, 5, 1]], dtype=np.uint64)
    coo_a = SparseArray("sparse_coo", (3, 5, 6), np.array([1, 2, 3, 4], np.float32), coords=coords)
    coo_b = SparseArray("sparse_coo", (3, 5, 6), np.array([1, 2, 3.5, 4], np.float32), coords=coords)
    save_arrays(tmp_path / "a.zt", {"s": _csr(a_dense), "m": _csr(a_dense), "c": coo_a}, "zt")
    save_arrays(tmp_path / "b.zt", {"s": _csr(b_dense), "m": m_b, "c": coo_b}, "zt")
    return tmp_path / "a.zt", tmp_path / "b.zt", a_dense, {"s": b_dense, "m": m_b}


def _delta_entries(qtbot, view):
    sparse = view.pair_view.sparse
    qtbot.waitUntil(lambda: all(sparse.spies[s].prepared is not None for s in ("A", "B", "Δ")), timeout=10_000)
    return sparse, sparse.entries


def test_sparse_pairs_show_spy_plots_and_the_differing_entries(qtbot, sparse_pairs):
    a, b, a_dense, b_dense = sparse_pairs
    view = run_compare(qtbot, a, b)
    for name in ("s", "m"):
        assert view.select_name(name)
        assert view.pair_view.pages.currentWidget() is view.pair_view.sparse
        assert view.pair_view.histogram.isHidden()
        sparse, entries = _delta_entries(qtbot, view)
        expected = b_dense[name].astype(np.float64) - a_dense.astype(np.float64)
        where = np.argwhere(expected != 0)
        np.testing.assert_array_equal(entries.coords.T, where)            # row-major, exactly the differing ones
        np.testing.assert_array_equal(entries.delta, expected[expected != 0])
        assert sparse.spies["Δ"].prepared.facts.nnz == len(where) and not entries.truncated
        assert sparse.spies["A"].prepared.facts.nnz == np.count_nonzero(a_dense)
        assert sparse.spies["B"].prepared.facts.nnz == np.count_nonzero(b_dense[name])
        assert f"{len(where):,} differing" in sparse.labels["Δ"].text()
    sparse.spies["A"].plot.view.setRange(QRectF(10, 20, 8, 6), padding=0)   # zoom one: all three follow
    qtbot.waitUntil(lambda: sparse.view_range("Δ") == sparse.view_range("A"))
    assert sparse.view_range("B") == sparse.view_range("A")
    assert view.select_name("c")                                             # rank-3 COO: no densifying
    sparse, entries = _delta_entries(qtbot, view)
    np.testing.assert_array_equal(entries.coords, [[2], [0], [5]])
    assert entries.delta.tolist() == [0.5]
    view.select_name("s")
    view.shutdown()


def test_differing_entries_are_bounded(sparse_pairs):
    from ztviewer.analysis.diff.entries import differing_entries
    from ztviewer.codec import open_file

    a, b, _, _ = sparse_pairs
    with open_file(str(a)) as tf_a, open_file(str(b)) as tf_b:
        found = differing_entries(tf_a, tf_a.tensor("m"), tf_b, tf_b.tensor("m"), limit=0)
        assert found.truncated and found.count == 0
        found = differing_entries(tf_a, tf_a.tensor("s"), tf_b, tf_b.tensor("s"), limit=2, chunk_elements=7)
        assert found.truncated and found.count == 2


def test_tensor_train_pair_compares_reconstructed_slices(qtbot, tmp_path):
    rng = np.random.default_rng(11)
    cores = [rng.standard_normal((1, 6, 2)), rng.standard_normal((2, 7, 3)), rng.standard_normal((3, 5, 1))]
    full = np.einsum("aib,bjc,ckd->ijk", *cores)
    nudged = full.copy()
    nudged[4, 2, 3] += 0.25
    save_arrays(tmp_path / "a.zt", {"t": TensorTrainArray(cores)}, "zt")
    save_arrays(tmp_path / "b.zt", {"t": nudged}, "zt")
    view = run_compare(qtbot, tmp_path / "a.zt", tmp_path / "b.zt")
    select(qtbot, view, "t")
    pair = view.pair_view
    assert pair.pages.currentIndex() == 0
    delta = pair.heatmaps["Δ"]
    qtbot.waitUntil(lambda: delta.base is not None and delta.base.image.exact, timeout=10_000)
    plane = pair.session.plane
    assert plane.axes == (1, 2) and plane.fixed == ((0, 0),)
    np.testing.assert_allclose(delta.base.image.data, (nudged - full)[0], atol=1e-12)
    view.session.jump_to((4, 2, 3))
    qtbot.waitUntil(lambda: delta.base is not None and delta.base.image.exact and pair.session.plane.fixed == ((0, 4),)
                    and delta.base.image.data[2, 3] != 0, timeout=10_000)
    np.testing.assert_allclose(delta.base.image.data, (nudged - full)[4], atol=1e-12)
    assert delta.data.value((4, 2, 3)) == pytest.approx(0.25)
    view.shutdown()


def test_pairs_grouped_by_dotted_prefix(qtbot, tmp_path):
    """Groups as in the file tree, each with its worst verdict and how many of its pairs differ; 'Only
    differences' drops unchanged groups; a metric sorts within each group; A and B open and close together."""
    rng = np.random.default_rng(2)
    arrays = {name: rng.standard_normal((6, 5)).astype(np.float32)
              for name in ("block.0.w", "block.0.b", "block.1.w", "block.1.b", "head")}
    changed = {k: v.copy() for k, v in arrays.items() if k != "head"}
    changed["block.0.w"][1, 2] += np.float32(0.125)
    changed["block.0.b"][3, 4] += np.float32(0.5)
    save_arrays(tmp_path / "a.zt", arrays, "zt")
    save_arrays(tmp_path / "b.zt", changed, "zt")
    view = run_compare(qtbot, tmp_path / "a.zt", tmp_path / "b.zt")
    model = view.model

    def children(parent=QModelIndex()):
        return [model.index(r, 0, parent) for r in range(model.rowCount(parent))]

    def cell(index, column):
        return index.siblingAtColumn(column).data()

    block, head = children()
    assert (block.data(), cell(head, 0)) == ("block  (4)", "head")
    assert cell(block, FIRST_B) == "different" and cell(head, FIRST_B) == "only in A"
    assert cell(block, len(HEADERS) - 1) == "2 of 4 differ: 2 different, 2 identical"
    zero, one = children(block)
    assert (zero.data(), cell(one, FIRST_B)) == ("0  (2)", "identical")
    assert view.tree_a.isExpanded(zero) and view.tree_b.isExpanded(zero)
    view.tree_a.collapse(zero)                                    # the B tree follows, and it stays closed
    assert not view.tree_b.isExpanded(zero)
    view.tree_b.sortByColumn(FIRST_METRIC, Qt.SortOrder.DescendingOrder)
    zero = children(children()[0])[0]
    assert [cell(i, 0) for i in children(zero)] == ["block.0.b", "block.0.w"]   # 0.5 before 0.125
    assert not view.tree_a.isExpanded(zero) and not view.tree_b.isExpanded(zero)
    view.tree_b.sortByColumn(FIRST_METRIC, Qt.SortOrder.AscendingOrder)
    zero = children(children()[0])[0]
    assert [cell(i, 0) for i in children(zero)] == ["block.0.w", "block.0.b"]
    view.only_differences.setChecked(True)
    block, head = children()
    assert [i.data() for i in children(block)] == ["0  (2)"]
    assert cell(block, len(HEADERS) - 1) == "2 of 2 differ: 2 different"
    assert view.select_name("block.0.b") and view.session.selected_pair.name == "block.0.b"
    view.shutdown()


def test_pair_histograms_arrive_in_two_bounded_steps(qtbot, tmp_path, monkeypatch):
    from ztviewer.gui.compare.pair_histogram import PairHistogram
    from ztviewer.session import pair_data

    shown = []
    original = PairHistogram.show_histograms
    monkeypatch.setattr(PairHistogram, "show_histograms",
                        lambda self, h: (shown.append(None if h is None else h.counted), original(self, h)))
    monkeypatch.setattr(pair_data, "HISTOGRAM_SAMPLE", 60_000)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((400, 300)).astype(np.float32)
    save_arrays(tmp_path / "a.zt", {"w": x}, "zt")
    save_file({"w": x + np.float32(1)}, str(tmp_path / "b.safetensors"))
    view = run_compare(qtbot, tmp_path / "a.zt", tmp_path / "b.safetensors")
    select(qtbot, view, "w")
    qtbot.waitUntil(lambda: (60_000, 60_000) in shown, timeout=10_000)
    counted = [c for c in shown if c is not None]
    quick = x.size // -(-x.size // 16_384)                         # every 8th element: 15,000
    assert counted == [(quick, quick), (60_000, 60_000)]           # the quick sample first, then the bounded one
    histograms = view.pair_view.data.histograms
    assert histograms.counts_a.sum() == 60_000 and histograms.total == (x.size, x.size)
    assert "60,000 of 120,000" in view.pair_view.histogram.getPlotItem().titleLabel.text
    view.shutdown()


def test_layout_fits_the_numbers_and_details(qtbot, checkpoints):
    """At 1680 px every number column is in view, the histogram gets real height and the details list all
    numbers of the selected pair."""
    a, b, _, _ = checkpoints
    view = run_compare(qtbot, a, b)
    view.resize(1680, 1000)
    select(qtbot, view, "layer.w")
    qtbot.wait(50)
    header = view.tree_b.header()
    last_metric = len(HEADERS) - 2
    assert header.sectionViewportPosition(last_metric) + header.sectionSize(last_metric) \
        <= view.tree_b.viewport().width()
    for column in range(FIRST_METRIC, last_metric + 1):       # numbers are not cut
        widest = max(view.tree_b.fontMetrics().horizontalAdvance(str(i.siblingAtColumn(column).data() or ""))
                     for i in leaves(view.model))
        assert header.sectionSize(column) >= widest
    pair_view = view.pair_view
    assert pair_view.histogram.height() >= 8 * pair_view.fontMetrics().height()
    text = pair_view.details.text()
    stats = view.session.selected_pair.stats
    for label in ("max |Δ|", "mean |Δ|", "rel L2", "cosine", "SNR dB", "max ULP", "NaN mismatches",
                  "Inf mismatches", "differing", "float32 64 × 48"):
        assert label in text
    assert f"{stats.max_abs:.4g} @[10,20]" in text and f"{stats.cosine:.9g}" in text
    view.shutdown()
