"""The tensor-train browser compared with a reference (issue 17 §6): the reconstructed slice gets the panel, the
.npy beside the file and same-shaped dense tensors are offered, the error figures match numpy, the error map is
TT − reference of the slice the reconstruction shows."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gui.inspect_helpers import heatmap_painted, show_and_wait
from ztviewer.codec import open_file, tt


@pytest.fixture
def t3(corpus_dir):
    with open_file(corpus_dir / "blz/t3_4x5x6_truncated.blz") as tf:
        yield tf


def test_reconstructed_slice_gets_most_of_the_panel(qtbot, panel, t3):
    show_and_wait(qtbot, panel, t3, "t3_4x5x6_truncated")
    view = panel.tt
    view.tabs.setCurrentWidget(view.reconstruction)
    qtbot.waitUntil(lambda: heatmap_painted(view.reconstruction))
    plot = view.reconstruction.image
    assert plot.height() >= 0.45 * panel.height(), (plot.height(), panel.height())   # was ~12 px of 960


def test_compare_with_the_npy_beside_the_file(qtbot, panel, t3, corpus_dir):
    tensor = show_and_wait(qtbot, panel, t3, "t3_4x5x6_truncated")
    view = panel.tt
    compare = view.compare
    labels = [compare.reference.itemText(i) for i in range(compare.reference.count())]
    assert "t3_4x5x6_truncated.npy (.npy)" in labels
    reference = np.load(corpus_dir / "blz/t3_4x5x6_truncated.npy")
    cores = tt.tt_cores(t3, tensor)
    dense = tt.reconstruct(cores)
    view.reconstruction.axes.set_index(0, 2)                      # the slice shown: axis 0 at 2
    view.tabs.setCurrentWidget(compare)
    with qtbot.waitSignal(compare.compared, timeout=10_000) as blocker:
        compare.reference.setCurrentIndex(labels.index("t3_4x5x6_truncated.npy (.npy)"))
        compare.reference.activated.emit(compare.reference.currentIndex())
    error = blocker.args[0]
    assert error.relative == pytest.approx(tt.relative_error(cores, reference), rel=1e-9)
    diff = dense - reference
    assert error.max_abs == pytest.approx(np.abs(diff).max(), rel=1e-9)
    assert error.max_abs_index == tuple(int(i) for i in np.unravel_index(np.abs(diff).argmax(), diff.shape))
    assert f"{error.relative:.4g}" in compare.result.text()
    heat = compare.error_map
    qtbot.waitUntil(lambda: heatmap_painted(heat))
    assert heat.axes.fixed() == {0: 2} and heat.axes.axes() == view.reconstruction.axes.axes()
    assert heat.base.image.method == "exact"
    np.testing.assert_allclose(heat.image.base.image, diff[2], rtol=1e-9, atol=1e-15)


def test_a_reference_of_another_shape_is_refused(qtbot, panel, t3, tmp_path):
    show_and_wait(qtbot, panel, t3, "t3_4x5x6_truncated")
    compare = panel.tt.compare
    path = tmp_path / "wrong.npy"
    np.save(path, np.zeros((4, 5, 7)))
    compare.compare_with_npy(str(path))
    qtbot.waitUntil(lambda: "Cannot compare" in compare.result.text(), timeout=10_000)
    assert "4 × 5 × 7" in compare.result.text() and compare.error_map.isHidden()


def test_quantized_group_tensor_is_shown_dequantized(qtbot, panel, corpus_dir):
    """ztensor 1.2.x quantized_group (issue 17 §9): a heatmap of the dequantized values, not a structural note."""
    from ztviewer.codec import quantized

    with open_file(corpus_dir / "zt_v1.x/ztensor-1.2.3/types_attrs.zt") as tf:
        tensor = show_and_wait(qtbot, panel, tf, "qgroup")
        assert panel.stack.currentWidget() is panel.heatmap
        qtbot.waitUntil(lambda: heatmap_painted(panel.heatmap))
        np.testing.assert_array_equal(panel.heatmap.data.array, quantized.dequantize(tf, tensor))
        assert "code − zero" in panel.heatmap.name


def test_zstd_tensor_larger_than_the_cache_is_streamed(qtbot, pool, tmp_path):
    """Issue 17 §9: a compressed tensor decoding to more than the inspect cache budget is shown (its plane
    reduced while decoding), not refused; nothing of it enters the cache."""
    from ztviewer.codec.arrays import save_arrays
    from ztviewer.gui.views.inspect import InspectPanel
    from ztviewer.session.decode_cache import DecodedCache
    from ztviewer.session.streamed_data import StreamedData

    weight = np.random.default_rng(2).standard_normal((600, 800)).astype(np.float32)    # 1.9 MB decoded
    save_arrays(tmp_path / "w.zt", {"w": weight}, "zt", compress=("zstd", 3))
    cache = DecodedCache(budget=1 << 20)
    panel = InspectPanel(pool, cache)
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    with open_file(tmp_path / "w.zt") as tf:
        show_and_wait(qtbot, panel, tf, "w")
        heat = panel.heatmap
        assert panel.stack.currentWidget() is heat and isinstance(heat.data, StreamedData)
        qtbot.waitUntil(lambda: heatmap_painted(heat), timeout=20_000)
        image = heat.base.image
        assert image.method != "strided"                      # the whole plane was reduced, block by block
        assert float(np.abs(image.data).max()) == float(np.abs(weight).max())   # peaks survive the reduction
        assert heat.data.value((599, 799)) == pytest.approx(float(weight[599, 799]))
        assert (tf.path, tf.tensor("w").index, "dense") not in cache
        panel.shutdown()
