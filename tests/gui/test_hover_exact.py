"""The hover read-out names the element under the mouse at every zoom: the value shown equals array[row, col], the
"pixel:" part appears only where a reduced image is drawn, and a zoom under a still mouse updates the read-out."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF

from tests.gui.inspect_helpers import heatmap_painted
from ztviewer.session.inspect_data import DenseData

ROWS = COLS = 1000
PLANE = (np.arange(ROWS)[:, None] * COLS + np.arange(COLS)[None, :]).astype(np.float32)   # every value unique


def _scene_point(view, row: float, col: float) -> QPointF:
    return view.image.view.mapViewToScene(QPointF(col, row))


def _zoomed(qtbot, heatmap, r: int, c: int, span: int) -> None:
    heatmap.image.view.setRange(QRectF(c - span / 2, r - span / 2, span, span), padding=0)
    heatmap.image._settle.timeout.emit()          # the range settled: request the sharper image now
    qtbot.waitUntil(lambda: not heatmap.image_jobs.busy and heatmap_painted(heatmap), timeout=10_000)


@pytest.mark.parametrize("span", [30, 1000])
def test_the_read_out_is_the_element_under_the_mouse(qtbot, heatmap, span):
    heatmap.set_data(DenseData(PLANE, "float32"), "t")
    qtbot.waitUntil(lambda: heatmap_painted(heatmap), timeout=10_000)
    r, c = 504, 884
    _zoomed(qtbot, heatmap, r, c, span)
    exact = heatmap.detail is not None and heatmap.detail.image.exact
    assert exact == (span == 30)
    for dr, dc in [(0, 0), (0.3, 0.3), (-0.3, -0.3), (0.45, -0.45)]:
        heatmap.image._mouse_moved(_scene_point(heatmap, r + dr, c + dc))
        text = heatmap.readout.text()
        assert text.startswith(f"[{r}, {c}] = {PLANE[r, c]:.7g}"), text
        assert ("pixel:" in text) == (not exact), text          # exact values: no overview block's value


def test_a_zoom_under_a_still_mouse_updates_the_read_out(qtbot, heatmap):
    heatmap.set_data(DenseData(PLANE, "float32"), "t")
    qtbot.waitUntil(lambda: heatmap_painted(heatmap), timeout=10_000)
    _zoomed(qtbot, heatmap, 504, 884, 30)
    at = _scene_point(heatmap, 504, 884)
    heatmap.image._mouse_moved(at)
    assert heatmap.readout.text().startswith("[504, 884] = ")
    heatmap.image.view.setRange(QRectF(100 - 15, 200 - 15, 30, 30), padding=0)   # the mouse stays where it was
    row, col = heatmap.image.plane_at(at)
    assert (row, col) != (504, 884)
    assert heatmap.readout.text().startswith(f"[{row}, {col}] = {PLANE[row, col]:.7g}"), heatmap.readout.text()
