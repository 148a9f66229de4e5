"""Pixel check: a zoomed spy plot draws what is there — its empty fine pixels show the background, never the
coarse overview beneath them (issue 17 §1)."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF

from tests.gui.inspect_helpers import show_and_wait, wait_idle
from tests.gui.test_inspect_render import pixels, render_plot
from ztviewer.codec.arrays import SparseArray

N = 20_000
BAND = (5_000, 9_000)     # every 8th row of this band is full across these columns; all else is empty


def striped_csr() -> SparseArray:
    counts = np.zeros(N, np.int64)
    stripe_rows = np.arange(BAND[0], BAND[1], 8)
    width = BAND[1] - BAND[0]
    counts[stripe_rows] = width
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
    indices = np.tile(np.arange(BAND[0], BAND[1], dtype=np.uint64), len(stripe_rows))
    return SparseArray("sparse_csr", (N, N), np.ones(indices.size, np.float32), indices=indices, indptr=indptr)


def data_area(view) -> np.ndarray:
    """Pixels of the rendered plot inside the zoomed region (axes and colour bar cut away)."""
    image = render_plot(view.plot)
    got = pixels(image)
    scene_rect = view.plot.plot.sceneBoundingRect()
    box = view.plot.view.sceneBoundingRect()
    sx, sy = image.width() / scene_rect.width(), image.height() / scene_rect.height()
    x0, x1 = int((box.left() - scene_rect.left()) * sx) + 3, int((box.right() - scene_rect.left()) * sx) - 3
    y0, y1 = int((box.top() - scene_rect.top()) * sy) + 3, int((box.bottom() - scene_rect.top()) * sy) - 3
    return got[y0:y1, x0:x1]


def test_zoomed_empty_pixels_are_background_not_overview(qtbot, panel, open_arrays):
    tf = open_arrays({"stripes": striped_csr()})
    show_and_wait(qtbot, panel, tf, "stripes", timeout=30_000)
    view = panel.sparse
    overview = view.prepared.overview
    assert overview.markers is None and overview.image.counts.shape[0] < N // 8   # the overview blurs stripes
    view.plot.view.setRange(QRectF(6_000, 6_000, 400, 400), padding=0)
    view.plot._settle.stop()
    view._range_settled()
    wait_idle(qtbot, view.detail_slot, timeout=30_000)
    assert view.current is not None and not view.current.base and view.current.markers is None
    counts = view.current.image.counts
    empty_share = float(np.mean(counts == 0))
    assert 0.4 < empty_share < 0.95          # most fine pixels fall between the stripes
    area = data_area(view)
    background = np.array(view.plot.backgroundBrush().color().getRgb()[:3])   # pixels() are R, G, B
    is_background = np.all(np.abs(area - background) <= 16, axis=2)
    # what is drawn is what is there: as many background pixels as empty bins (rendering blurs edges a little)
    assert abs(float(is_background.mean()) - empty_share) < 0.15, (is_background.mean(), empty_share)
    # and the stripes are drawn: non-background pixels are blue
    stripe = area[~is_background]
    assert stripe.size and np.mean(stripe[:, 2] > stripe[:, 0] + 40) > 0.9
