"""Statistics tab and whole-file statistics table: values from the analysis layer, progressive filling,
sorting (unknowns last), qtmodeltester, activation."""
from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.gui.inspect_helpers import show_and_wait
from ztviewer.analysis.tensor_stats import tensor_stats
from ztviewer.codec import open_file
from ztviewer.gui.views.inspect.file_stats import Col, FileStatsModel, FileStatsProxy


@pytest.fixture
def odd_file(open_arrays):
    a = np.array([[0.0, 1.0, -3.0], [np.nan, np.inf, -np.inf]], np.float32)
    return open_arrays({"odd": a, "big": np.full((4, 5), 1e6, np.float64), "ints": np.arange(6, dtype=np.int16),
                        "flags": np.array([True, False, True])})


def test_statistics_tab_shows_tensor_stats(qtbot, panel, odd_file):
    tensor = show_and_wait(qtbot, panel, odd_file, "odd")
    panel.tabs.setCurrentWidget(panel.stats)
    qtbot.waitUntil(lambda: panel.stats.stats is not None, timeout=10_000)
    expected = tensor_stats(odd_file, tensor)
    got = panel.stats.stats
    assert (got.min, got.max, got.nan, got.pos_inf, got.neg_inf, got.zeros) == (-3.0, 1.0, 1, 1, 1, 1)
    assert got.mean == pytest.approx(expected.mean) and got.std == pytest.approx(expected.std)
    assert panel.stats.values["nan"].text() == "1" and panel.stats.values["min"].text() == "-3"
    assert panel.stats.values["sparsity"].text().startswith("16.67")
    x, y = panel.stats.bars.getData()
    assert len(x) == len(y) + 1 and y.sum() == got.finite
    panel.stats.log_counts.setChecked(True)
    assert panel.stats.plot.getPlotItem().getAxis("left").labelText.startswith("log10")
    show_and_wait(qtbot, panel, odd_file, "flags")  # the visible tab follows the selection
    qtbot.waitUntil(lambda: panel.stats.stats is not None and panel.stats.stats.count == 3, timeout=10_000)
    assert panel.stats.stats.zeros == 1


def test_statistics_of_sparse_tt_and_zstd_tensors(qtbot, panel, corpus_dir):
    cases = [("zt_v1.0/ztensor-1.0.1/sparse.zt", "csr_f32_5x6"), ("blz/mat_6x8_exact.blz", "mat_6x8_exact"),
             ("zt_v1.0/ztensor-1.0.1/dtypes_zstd.zt", "z_bfloat16")]
    panel.tabs.setCurrentWidget(panel.stats)
    for path, name in cases:
        with open_file(corpus_dir / path) as tf:
            tensor = tf.tensor(name)
            panel.set_file(tf)
            panel.show_item(tensor)
            qtbot.waitUntil(lambda: panel.stats.stats is not None, timeout=10_000)
            expected = tensor_stats(tf, tensor)
            assert panel.stats.stats.count == expected.count == tensor.numel
            assert panel.stats.stats.mean == pytest.approx(expected.mean)


def test_structural_layout_has_no_statistics(qtbot, panel, corpus_dir):
    import copy

    with open_file(corpus_dir / "zt_v1.x/ztensor-1.2.3/types_attrs.zt") as tf:
        unknown = copy.copy(tf.tensor("qgroup"))      # an extension layout no view decodes
        unknown.layout = "vendor_packed"
        panel.set_file(tf)
        panel.show_item(unknown)
        qtbot.waitUntil(lambda: "structurally" in panel.note.text())
        panel.tabs.setCurrentWidget(panel.stats)
        assert "no values" in panel.stats.title.text()


def test_file_table_fills_progressively_and_sorts_outliers(qtbot, panel, odd_file):
    panel.set_file(odd_file)
    view = panel.file_stats
    assert view.model.filled == 0  # computed only when the tab is shown
    with qtbot.waitSignal(view.finished, timeout=10_000):
        panel.tabs.setCurrentWidget(view)
    model = view.model
    assert model.filled == model.rowCount() == 4
    rows = {model.item(model.index(r, 0)).name: r for r in range(model.rowCount())}
    assert model.value(rows["odd"], Col.NAN) == 1 and model.value(rows["big"], Col.ABSMAX) == 1e6
    view.table.sortByColumn(Col.ABSMAX, Qt.SortOrder.DescendingOrder)
    first = view.proxy.index(0, Col.NAME).data()
    assert first == "big"
    view.filter.setText("odd")
    assert view.proxy.rowCount() == 1
    activated = []
    view.tensor_activated.connect(activated.append)
    view._activated(view.proxy.index(0, 0))
    assert activated[0].name == "odd"


def test_unknown_values_sort_last_both_ways(qtbot):
    from ztviewer.analysis.stats import TensorStats
    from ztviewer.codec.model import Tensor

    model = FileStatsModel()
    model.tensors = [Tensor(n, "float32", (1,)) for n in "abc"]
    model.results = [TensorStats(count=1, finite=1, min=2.0, max=2.0), "cannot read",
                     TensorStats(count=1, finite=1, min=-5.0, max=-5.0)]
    proxy = FileStatsProxy()
    proxy.setSourceModel(model)
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        proxy.sort(Col.MAX, order)
        names = [proxy.index(r, Col.NAME).data() for r in range(3)]
        assert names[-1] == "b"
    assert model.index(1, Col.MAX).data() == "—" and model.index(1, Col.NOTE).data() == "cannot read"


def test_file_stats_model_passes_qtmodeltester(qtmodeltester, corpus_dir):
    with open_file(corpus_dir / "safetensors/safetensors-0.8.0/dtypes_2d.safetensors") as tf:
        model = FileStatsModel(tf)
        from ztviewer.analysis.tensor_stats import file_statistics

        for row, (_, result) in enumerate(file_statistics(tf, bins=0)):
            model.set_result(row, result)
        qtmodeltester.check(model)
        assert all(not isinstance(r, str) for r in model.results)
        assert not math.isnan(model.value(0, Col.MEAN))
