import numpy as np

from tests.gui.inspect_helpers import show_and_wait
from ztviewer.analysis.reduce import block_reduce, level_sample
from ztviewer.gui.views.inspect import levels as lv
from ztviewer.gui.views.inspect.image_jobs import describe


def weight_with_outlier_column(rows=2048, cols=4096, column=1000):
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((rows, cols)).astype(np.float32)
    weight[:, column] = 300.0
    return weight


def test_sample_reads_each_column_rarely_and_stays_in_region():
    weight = weight_with_outlier_column()
    sample = level_sample(weight, 1 << 16)
    assert 60_000 <= sample.size <= 1 << 16
    assert np.mean(sample == 300.0) < 0.001        # an outlier column is one in 4096, sampled as such
    region = level_sample(weight, 1 << 10, region=(0, 64, 0, 64))
    assert set(np.unique(region)) <= set(np.unique(weight[:64, :64]))


def test_levels_from_the_sample_ignore_one_outlier_column_that_the_peak_image_cannot():
    weight = weight_with_outlier_column()
    peak = block_reduce(weight, None, (256, 256), "max").data
    _, high_from_image = lv.compute_levels(peak, "percentile", lv.DEFAULT_PERCENT, False)
    _, high_from_data = lv.compute_levels(level_sample(weight), "percentile", lv.DEFAULT_PERCENT, False)
    assert high_from_image == 300.0
    assert 3.0 < high_from_data < 5.0


def test_small_planes_are_taken_whole():
    plane = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(np.sort(level_sample(plane, 100)), np.arange(12))


def test_heatmap_of_a_weight_with_an_outlier_column_is_not_washed_out(qtbot, panel, open_arrays):
    from PySide6.QtCore import QRectF

    from tests.gui.inspect_helpers import wait_idle
    from tests.gui.test_inspect_render import pixels, render_plot

    weight = weight_with_outlier_column(1024, 2048, column=700)
    tf = open_arrays({"w": weight})
    show_and_wait(qtbot, panel, tf, "w", timeout=30_000)
    view = panel.heatmap
    wait_idle(qtbot, view.image_jobs.base_slot, timeout=30_000)
    low, high = view.image.levels()
    assert 2.0 < high < 10.0 and -10.0 < low < -2.0
    got = pixels(render_plot(view.image))
    box = got[40:200, 60:240].reshape(-1, 3)
    spread = np.std(box.astype(np.float64), axis=0).max()
    assert spread > 20                       # the colours vary: the weight's structure is visible
    # the footer follows Fit: zoomed it describes the detail, fitted again the overview
    view.image.view.setRange(QRectF(100, 100, 60, 40), padding=0)
    view.image._settle.stop()
    view.image_jobs.range_settled()
    wait_idle(qtbot, view.image_jobs.detail_slot, timeout=30_000)
    assert view.info.text() == "41 × 61, exact values" or "exact" in view.info.text()
    zoomed = view.info.text()
    view.controls.reset.click()
    view.image._settle.stop()
    view.image_jobs.range_settled()
    assert view.info.text() != zoomed and view.info.text() == describe(view.base)


def test_sample_rows_are_the_previews_rows_and_still_spread_over_columns():
    """A cold file: the level sample reads rows the strided preview has just read (other rows would each cost a
    disk read through the map), still one column in many."""
    from ztviewer.analysis.plane_jobs import Inline, render_plane

    rows, cols = 4096, 2048
    plane = np.repeat(np.arange(rows, dtype=np.float32)[:, None], cols, axis=1)  # value = row index
    plane[:, 1000] = -1.0
    ctx = Inline()
    render_plane(ctx, plane, (0, rows, 0, cols), (300, 400), "max", preview=True, dtype_name="float32")
    preview = ctx.partials[0]
    step = int(preview.image.row_edges[1] - preview.image.row_edges[0])
    assert step > 1 and preview.sample is not None and preview.sample.size > 30_000
    sampled_rows = preview.sample[preview.sample >= 0]
    assert set(np.unique(sampled_rows % step)) == {0.0}
    assert len(np.unique(sampled_rows)) > 250   # spread over the preview's rows
    assert np.mean(preview.sample == -1.0) < 0.002
    weight = weight_with_outlier_column()
    assert np.mean(level_sample(weight, 1 << 16, row_step=7) == 300.0) < 0.001


def test_percentile_levels_are_numpys_lower_and_higher_percentiles():
    """The levels pick the same elements as ``np.percentile(method="lower" / "higher")`` (one partial sort for
    both ends instead of one per call)."""
    rng = np.random.default_rng(21)
    for size in (3, 999, 1000, 65_536, 65_521):
        for dtype, scale in ((np.float32, 1.0), (np.float64, 1e6), (np.float32, 1e-3)):
            values = (rng.standard_normal(size) * scale).astype(dtype)
            values[rng.integers(0, size)] = np.nan
            finite = values[np.isfinite(values)]
            for percent in (0.1, 0.37, 2.5, 25.0):
                low, high = lv.compute_levels(values, "percentile", percent, False)
                assert (low, high) == (float(np.percentile(finite, percent, method="lower")),
                                       float(np.percentile(finite, 100 - percent, method="higher")))
                low, high = lv.compute_levels(values, "percentile", percent, True)
                m = float(np.percentile(np.abs(finite), 100 - percent, method="higher"))
                assert (low, high) == (-m, m) or m == 0


def test_percentile_levels_exact_on_data_that_fools_a_subsample(monkeypatch):
    """The tail shortcut (a threshold from every 16th value) stays exact where the subsample misleads it: values
    sorted either way, ties at the threshold, constant data, outliers beside the subsampled positions, and
    extremes exactly on them (the threshold then keeps too few values: the whole sample is partitioned)."""
    rng = np.random.default_rng(5)
    n = 65_536
    periodic = rng.standard_normal(n).astype(np.float32)
    periodic[::16] = 0.0                       # the subsample sees only zeros
    spikes = rng.standard_normal(n).astype(np.float32)
    spikes[1::16] = 50.0                       # 4,096 spikes the subsample never sees
    on_subsample = rng.standard_normal(n)
    on_subsample[::16] = 1e3 + np.arange(n // 16)   # every subsampled value an extreme: the shortcut gives up
    cases = {
        "ascending": np.arange(n, dtype=np.float32),
        "descending": np.arange(n, 0, -1).astype(np.float32),
        "constant": np.full(n, 3.0, np.float32),
        "ties": rng.integers(0, 4, n).astype(np.float32),
        "periodic": periodic,
        "spikes": spikes,
        "extremes on the subsample, top": on_subsample,
        "extremes on the subsample, bottom": -on_subsample,
        "few distinct in the tail": np.where(rng.random(n) < 0.002, 7.0, rng.random(n)).astype(np.float64),
    }
    gave_up = []
    real = lv._tail_rank
    monkeypatch.setattr(lv, "_tail_rank", lambda values, k: gave_up.append(k) if real(values, k) is None
                        else real(values, k))
    for name, values in cases.items():
        for percent in (0.01, 0.1, 1.0):
            low, high = lv.compute_levels(values, "percentile", percent, False)
            expected_levels = (float(np.percentile(values, percent, method="lower")),
                               float(np.percentile(values, 100 - percent, method="higher")))
            if name == "constant":
                expected_levels = (2.5, 3.5)   # one value: widened by ±0.5
            assert (low, high) == expected_levels, name
            _, m = lv.compute_levels(values, "percentile", percent, True)
            expected = float(np.percentile(np.abs(values), 100 - percent, method="higher"))
            assert m == (expected if expected > 0 else 1.0), name
    assert gave_up   # the fallback ran too
