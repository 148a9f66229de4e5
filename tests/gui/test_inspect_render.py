"""Pixel tests: small known tensors rendered offscreen and compared with stored reference PNGs.

The plot area of each view (axes, image, colour bar) is rendered into a fixed 320 × 240 image with a fixed
colour map and levels. A pixel matches when every channel is within ``TOLERANCE``; a test fails when more
than ``MAX_MISMATCH`` of the pixels do not (font hinting differs a little between machines). A failure leaves
``<name>.actual.png``, ``<name>.expected.png`` and ``<name>.diff.png`` in the test's ``tmp_path`` and names them
(:mod:`tests.gui.image_testing`).

Regenerate the references after an intended visual change with::

    ZTVIEWER_REGEN_PNG=1 python -m pytest tests/gui/test_inspect_render.py -p no:cacheprovider

and look at the files in ``tests/gui/reference_png/`` before committing them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QGraphicsWidget

from tests.gui.image_testing import assert_image_matches, pixels
from tests.gui.inspect_helpers import checkerboard, heatmap_painted, show_and_wait
from ztviewer.codec.arrays import SparseArray, TensorTrainArray

REFERENCES = Path(__file__).resolve().parent / "reference_png"
SIZE = (320, 240)
TOLERANCE = 24
MAX_MISMATCH = 0.02


def render_plot(image_plot) -> QImage:
    """The plot item of an :class:`ImagePlot` (with its colour bar) drawn into a fixed-size image."""
    out = QImage(SIZE[0], SIZE[1], QImage.Format.Format_RGB32)
    out.fill(QColor("white"))
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    scene = image_plot.scene()
    source = image_plot.plot.sceneBoundingRect()
    scene.render(painter, QRectF(0, 0, *SIZE), source, Qt.AspectRatioMode.IgnoreAspectRatio)
    painter.end()
    return out


def render_settled(qtbot, image_plot) -> QImage:
    """:func:`render_plot` once the plot has stopped changing: two renders in a row give the same image.

    Painting is what lays pyqtgraph out: an axis learns how wide its tick labels are while it is drawn and
    widens in a later layout pass, which shrinks the plot area. A render taken just after the data arrived can
    show the old geometry; how often depends on the machine's load. In about 1 run in 12 that pass never comes
    (the graphics layouts stay invalidated with no LayoutRequest pending: axis labels overlap the tick labels
    until the next resize), so the pending layouts are activated here, as the LayoutRequest would.
    """

    def render() -> QImage:
        for item in image_plot.scene().items():
            layout = QGraphicsWidget.layout(item) if isinstance(item, QGraphicsWidget) else None  # (pyqtgraph: .layout)
            if layout is not None and not layout.isActivated():
                layout.activate()
        return render_plot(image_plot)

    last = [render()]

    def unchanged() -> bool:
        image = render()
        same = image == last[0]
        last[0] = image
        return same

    qtbot.waitUntil(unchanged, timeout=10_000)
    return last[0]


def compare(image: QImage, name: str, tmp_path: Path) -> None:
    assert_image_matches(image, REFERENCES / f"{name}.png", tmp_path, tolerance=TOLERANCE, max_mismatch=MAX_MISMATCH)


def set_fixed_look(view, colormap: str, low: float, high: float) -> None:
    view.controls.colormap.setCurrentText(colormap)
    view.controls.low.setText(str(low))
    view.controls.high.setText(str(high))
    view.controls.high.editingFinished.emit()


def test_checkerboard_heatmap(qtbot, panel, open_arrays, tmp_path):
    tf = open_arrays({"board": checkerboard(8)})
    show_and_wait(qtbot, panel, tf, "board")
    set_fixed_look(panel.heatmap, "viridis", 0.0, 1.0)
    image = render_settled(qtbot, panel.heatmap.image)
    got = pixels(image)
    assert len({tuple(p) for p in got[100:140:8, 120:200:8].reshape(-1, 3)}) >= 2  # two colours, not one
    compare(image, "checkerboard", tmp_path)


def test_identity_sparse_spy(qtbot, panel, open_arrays, tmp_path):
    n = 16
    idx = np.arange(n, dtype=np.uint64)
    tf = open_arrays({"eye": SparseArray("sparse_csr", (n, n), np.ones(n, np.float32), indices=idx,
                                         indptr=np.arange(n + 1, dtype=np.uint64))})
    show_and_wait(qtbot, panel, tf, "eye")
    assert panel.sparse.current.markers is not None
    compare(render_settled(qtbot, panel.sparse.plot), "identity_sparse", tmp_path)


def test_identity_sparse_density(qtbot, panel, open_arrays, tmp_path):
    n = 3000
    idx = np.arange(n, dtype=np.uint64)
    tf = open_arrays({"eye": SparseArray("sparse_csr", (n, n), np.ones(n, np.float32), indices=idx,
                                         indptr=np.arange(n + 1, dtype=np.uint64))})
    show_and_wait(qtbot, panel, tf, "eye")
    assert panel.sparse.current.markers is None
    compare(render_settled(qtbot, panel.sparse.plot), "identity_sparse_density", tmp_path)


def test_rank1_tensor_train_slice(qtbot, panel, open_arrays, tmp_path):
    u = np.linspace(1.0, 2.0, 6).reshape(1, 6, 1)
    v = np.linspace(-1.0, 1.0, 8).reshape(1, 8, 1)
    w = np.ones((1, 3, 1))
    tf = open_arrays({"r1": TensorTrainArray([u, v, w])}, "tt.zt")
    show_and_wait(qtbot, panel, tf, "r1")
    heat = panel.tt.reconstruction
    heat.axes.set_axes(0, 1)
    qtbot.waitUntil(lambda: heatmap_painted(heat))
    np.testing.assert_allclose(heat.image.base.image, np.outer(u.ravel(), v.ravel()))
    set_fixed_look(heat, "blue–white–red", -2.0, 2.0)
    compare(render_settled(qtbot, heat.image), "rank1_tt", tmp_path)
