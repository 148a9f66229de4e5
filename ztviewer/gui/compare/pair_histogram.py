"""The A and B value histograms of a Compare tab's selected pair, drawn over each other."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ztviewer.analysis.diff.planes import PairHistograms

from ..views.inspect.image_plot import palette_colors, style_plot

HIST_A, HIST_B = (0x29, 0x80, 0xB9), (0xE6, 0x7E, 0x22)


class PairHistogram(pg.PlotWidget):
    """A and B value histograms drawn over each other (same bins)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background=palette_colors()[0])
        style_plot(self.getPlotItem())
        self.setLabel("bottom", "value")
        self.setLabel("left", "count")
        self.addLegend(offset=(-10, 10))
        self.curves = {}
        for label, rgb in (("A", HIST_A), ("B", HIST_B)):
            curve = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(*rgb, 90),
                                    pen=pg.mkPen(*rgb, width=1.5), name=label)
            self.addItem(curve)
            self.curves[label] = curve

    def show_histograms(self, histograms: PairHistograms | None) -> None:
        title = ""
        if histograms is not None and histograms.sampled:
            title = (f"a spread sample: {histograms.counted[0]:,} of {histograms.total[0]:,} (A), "
                     f"{histograms.counted[1]:,} of {histograms.total[1]:,} (B) elements")
        self.setTitle(title, size="8pt")
        for label in ("A", "B"):
            if histograms is None:
                self.curves[label].setData([], [])
                continue
            counts = histograms.counts_a if label == "A" else histograms.counts_b
            self.curves[label].setData(histograms.edges, counts.astype(np.float64))
