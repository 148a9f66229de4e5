"""Heatmap / line view wiring: it shows what the analysis layer computes, and every control changes what it
should (levels, colour maps, log scale, axes and sliders, complex parts, presentations, reductions)."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF

from tests.gui.inspect_helpers import heatmap_painted, show_and_wait, wait_idle
from ztviewer.analysis.plane_jobs import Inline, reduce_region
from ztviewer.analysis.reduce import block_reduce, strided_preview
from ztviewer.codec.dtypes import to_float32
from ztviewer.gui.views.inspect import levels as lv
from ztviewer.session.decode_cache import data_key
from ztviewer.session.inspect_data import DenseData


def show(qtbot, view, array, dtype_name=None, **kw):
    view.set_data(DenseData(array, dtype_name or array.dtype.name), "t", **kw)
    qtbot.waitUntil(lambda: heatmap_painted(view), timeout=10_000)


def test_small_plane_shows_exact_values(qtbot, heatmap):
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    show(qtbot, heatmap, a)
    assert heatmap.base.image.method == "exact"
    np.testing.assert_array_equal(heatmap.image.base.image, a)
    assert lv.is_diverging(heatmap.image.colormap_name)  # signed data: centred diverging map
    low, high = heatmap.image.levels()
    assert low == -high == -6.0


def test_large_plane_preview_then_block_reduction_as_computed_by_analysis(qtbot, heatmap):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((700, 900)).astype(np.float32)
    a[123, 456] = 50.0  # a spike a stride would miss
    previews = []
    heatmap.image_jobs.base_slot.current = None
    heatmap.rendered.connect(lambda: previews.append(heatmap.base.image.method if heatmap.base else None))
    show(qtbot, heatmap, a)
    image = heatmap.base.image
    assert previews[0] == "strided" and image.method == "peak"
    out = image.data.shape
    expected = reduce_region(Inline(), a, (0, 700, 0, 900), out, "peak")
    np.testing.assert_array_equal(image.data, expected.data)
    assert image.data.max() == 50.0
    assert "peak" in heatmap.info.text()
    first = strided_preview(a, *out)
    assert first.data.shape[0] <= out[0]


def test_reduction_method_choice_reaches_block_reduce(qtbot, heatmap):
    a = np.random.default_rng(2).standard_normal((600, 800)).astype(np.float32)
    show(qtbot, heatmap, a)
    heatmap.controls.set_method("mean")
    qtbot.waitUntil(lambda: heatmap_painted(heatmap) and heatmap.base.image.method == "mean", timeout=10_000)
    image = heatmap.base.image
    np.testing.assert_allclose(image.data, block_reduce(a, None, image.data.shape, "mean").data, rtol=1e-6)


def test_level_modes_and_manual_levels(qtbot, heatmap):
    a = np.linspace(0, 1, 400 * 300, dtype=np.float32).reshape(400, 300)
    a[0, 0] = 100.0
    show(qtbot, heatmap, a)
    assert heatmap.image.colormap_name == lv.DEFAULT_SEQUENTIAL  # non-negative data
    assert heatmap.controls.level_mode.currentText() == "percentile"
    clipped = heatmap.image.levels()
    assert clipped[1] < 100.0
    heatmap.controls.level_mode.setCurrentText("auto")
    shown = heatmap.base.image.data
    assert heatmap.image.levels() == (float(shown.min()), 100.0)
    heatmap.controls.low.setText("0.25")
    heatmap.controls.high.setText("0.5")
    heatmap.controls.high.editingFinished.emit()
    assert heatmap.controls.level_mode.currentText() == "manual"
    assert heatmap.image.levels() == (0.25, 0.5)
    assert tuple(heatmap.image.base.levels) == (0.25, 0.5)
    heatmap.image.levels_dragged.emit(0.1, 0.9)  # the colour bar's handles
    assert heatmap.controls.manual_levels() == (0.1, 0.9)


def test_colormap_choice_and_log_scale(qtbot, heatmap):
    a = np.array([[1e-3, 1e-2], [1.0, 0.0]], dtype=np.float64)
    show(qtbot, heatmap, a)
    heatmap.controls.colormap.setCurrentText("magma")
    assert heatmap.image.colormap_name == "magma"
    heatmap.controls.level_mode.setCurrentText("auto")
    heatmap.controls.log.setChecked(True)
    shown = heatmap.image.base.image
    assert np.isnan(shown[1, 1])  # log10(0) is left blank
    np.testing.assert_allclose(shown[0], [-3, -2], rtol=1e-6)
    assert heatmap.image.levels() == pytest.approx((-3.0, 0.0))
    assert heatmap.image.bar.axis.labelText.startswith("log10")


def test_axes_and_sliders_choose_the_plane(qtbot, heatmap):
    a = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    show(qtbot, heatmap, a)
    assert heatmap.axes.axes() == (2, 3)  # the last two axes by default
    np.testing.assert_array_equal(heatmap.image.base.image, a[0, 0])
    heatmap.axes.set_index(0, 1)
    heatmap.axes.set_index(1, 2)
    qtbot.waitUntil(lambda: heatmap_painted(heatmap))
    np.testing.assert_array_equal(heatmap.image.base.image, a[1, 2])
    heatmap.axes.col_axis.setCurrentIndex(0)  # rows = axis 2, columns = axis 0
    qtbot.waitUntil(lambda: heatmap_painted(heatmap))
    assert heatmap.axes.axes() == (2, 0)
    fixed = heatmap.axes.fixed()
    expected = np.moveaxis(a, (2, 0), (0, 1))[:, :, fixed.get(1, 0), fixed.get(3, 0)]
    np.testing.assert_array_equal(heatmap.image.base.image, expected)
    heatmap.axes.row_axis.setCurrentIndex(0)  # picking the column axis for rows swaps the two
    assert heatmap.axes.axes()[0] == 0 and heatmap.axes.axes()[1] != 0


def test_hover_reads_the_element(qtbot, heatmap):
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    show(qtbot, heatmap, a)
    heatmap.axes.set_index(0, 1)
    qtbot.waitUntil(lambda: heatmap_painted(heatmap))
    heatmap._hovered((2, 3))
    assert heatmap.readout.text().startswith("[1, 2, 3] = 23")
    heatmap._hovered(None)
    assert heatmap.readout.text().strip() == ""


@pytest.mark.parametrize("mode, part", [("magnitude", np.abs), ("phase", np.angle), ("real", np.real),
                                        ("imag", np.imag)])
def test_complex_modes(qtbot, heatmap, mode, part):
    z = (np.arange(12) - 6 + 1j * np.arange(12)[::-1]).astype(np.complex64).reshape(3, 4)
    show(qtbot, heatmap, z)
    assert heatmap.controls.complex_group.isVisibleTo(heatmap)
    heatmap.controls.complex_mode.setCurrentText(mode)
    qtbot.waitUntil(lambda: heatmap_painted(heatmap))
    np.testing.assert_allclose(heatmap.image.base.image, part(z), rtol=1e-6)
    heatmap._hovered((0, 0))
    assert "|z|" in heatmap.readout.text()


def test_bool_and_integer_types(qtbot, heatmap):
    show(qtbot, heatmap, np.eye(3, dtype=np.uint8), "bool")
    np.testing.assert_array_equal(heatmap.image.base.image, np.eye(3))
    assert heatmap.image.colormap_name == lv.DEFAULT_SEQUENTIAL
    heatmap._hovered((0, 0))
    assert heatmap.readout.text().startswith("[0, 0] = True")
    show(qtbot, heatmap, np.array([[-2, 3]], dtype=np.int64))
    np.testing.assert_array_equal(heatmap.image.base.image, [[-2, 3]])


def test_bfloat16_and_float8_are_decoded(qtbot, panel, open_arrays):
    bits = np.array([[0x3F80, 0xC000], [0x4040, 0x0000]], np.uint16)  # 1, -2, 3, 0
    fp8 = np.arange(16, dtype=np.uint8)
    tf = open_arrays({"bf": (bits, "bfloat16"), "f8": (fp8, "float8_e4m3fn")}, "t.safetensors")
    show_and_wait(qtbot, panel, tf, "bf")
    np.testing.assert_array_equal(panel.heatmap.image.base.image, [[1, -2], [3, 0]])
    show_and_wait(qtbot, panel, tf, "f8")
    np.testing.assert_array_equal(panel.heatmap.lines.current.values, to_float32(fp8, "float8_e4m3fn"))


def test_logical_float8_over_uint8_can_be_read_either_way(qtbot, panel, corpus_dir):
    from ztviewer.codec import open_file

    with open_file(corpus_dir / "zt_v1.x/ztensor-1.2.3/types_attrs.zt") as tf:
        tensor = show_and_wait(qtbot, panel, tf, "fp8_e4m3fn")
        controls = panel.heatmap.controls
        assert controls.present_group.isVisibleTo(panel) and controls.present_as.currentText() == "float8_e4m3fn"
        bits = np.asarray(panel.heatmap.data.array)
        np.testing.assert_array_equal(panel.heatmap.lines.current.values, to_float32(bits, "float8_e4m3fn"))
        controls.present_as.setCurrentText("uint8")
        qtbot.waitUntil(lambda: panel.heatmap.data.dtype_name == "uint8" and heatmap_painted(panel.heatmap))
        np.testing.assert_array_equal(panel.heatmap.lines.current.values, bits.astype(float))
        assert panel.tensor is tensor


def test_one_dimensional_tensors_are_line_plots(qtbot, heatmap):
    v = np.sin(np.linspace(0, 6, 50)).astype(np.float32)
    show(qtbot, heatmap, v)
    assert heatmap.stack.currentWidget() is heatmap.line
    np.testing.assert_allclose(heatmap.lines.current.values, v)
    long = np.zeros(300_000, np.float32)
    long[123_457] = -9.0
    show(qtbot, heatmap, long)
    data = heatmap.lines.current
    assert not data.exact and data.low.min() == -9.0  # the min/max envelope keeps the spike
    heatmap.line.view.setXRange(123_400, 123_500, padding=0)
    qtbot.waitUntil(lambda: heatmap.lines.current is not data and heatmap_painted(heatmap), timeout=10_000)
    assert heatmap.lines.current.exact and -9.0 in heatmap.lines.current.values


def test_zoom_refines_the_visible_region_and_cancels_stale_jobs(qtbot, heatmap):
    a = np.random.default_rng(3).standard_normal((3000, 3000)).astype(np.float32)
    show(qtbot, heatmap, a)
    slot = heatmap.image_jobs.detail_slot
    before = slot.cancelled_count
    heatmap.image.view.setRange(QRectF(100, 100, 1500, 1500), padding=0)
    heatmap.image._settle.stop()
    heatmap.image_jobs.range_settled()
    stale = slot.current
    assert stale is not None
    heatmap.image.view.setRange(QRectF(2000, 1000, 60, 40), padding=0)
    heatmap.image._settle.stop()
    heatmap.image_jobs.range_settled()
    assert stale.is_cancelled() and slot.cancelled_count == before + 1
    wait_idle(qtbot, slot)
    detail = heatmap.detail
    assert detail is not None and detail.region == heatmap.image.visible_region()
    assert detail.image.method == "exact"
    r0, r1, c0, c1 = detail.region
    np.testing.assert_array_equal(detail.image.data, a[r0:r1, c0:c1])
    assert heatmap.image.detail.isVisible()
    heatmap.controls.reset.click()
    qtbot.waitUntil(lambda: heatmap.detail is None, timeout=5_000)
    assert not heatmap.image.detail.isVisible()


def test_zstd_tensor_is_decoded_once_with_progress_into_the_cache(qtbot, panel, open_arrays, cache):
    a = np.arange(200 * 300, dtype=np.float32).reshape(200, 300)
    tf = open_arrays({"z": a}, compress=("zstd", 3))
    assert tf.tensor("z").components["data"].encoding == "zstd"
    show_and_wait(qtbot, panel, tf, "z")
    assert data_key(tf, tf.tensor("z"), "dense") in cache
    assert panel.heatmap.data.decoded
    np.testing.assert_array_equal(panel.heatmap.data.array, a)
    panel.show_item(None)
    panel.show_item(tf.tensor("z"))
    assert panel.stack.currentWidget() is panel.heatmap  # from the cache: no decoding step


def test_tensor_beyond_the_cache_budget_is_streamed_not_refused(qtbot, pool, open_arrays):
    from ztviewer.gui.views.inspect import InspectPanel
    from ztviewer.session.decode_cache import DecodedCache
    from ztviewer.session.streamed_data import StreamedData

    widget = InspectPanel(pool, DecodedCache(budget=1000))
    qtbot.addWidget(widget)
    tf = open_arrays({"z": np.zeros((100, 100), np.float32)}, compress=("zstd", 3))
    show_and_wait(qtbot, widget, tf, "z")
    assert widget.stack.currentWidget() is widget.heatmap and isinstance(widget.heatmap.data, StreamedData)
    assert widget.heatmap.data.value((99, 99)) == 0.0
    widget.shutdown()
