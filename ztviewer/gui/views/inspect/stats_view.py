"""Statistics of one tensor, computed on a worker: min, max, mean, std, zeros, NaN, ±Inf, sparsity and a
histogram of the finite values."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import QCheckBox, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ztviewer.analysis.mapped import release
from ztviewer.analysis.stats import TensorStats, array_chunks, compute_stats
from ztviewer.analysis.tensor_stats import tensor_stats
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.session.decode_cache import DecodedCache, data_key
from ztviewer.session.inspect_data import load_dense, presented_as
from ztviewer.session.view_registry import view_kind

from .image_plot import palette_colors, style_plot
from .progress import DelayedProgress
from .runner import JobSlot

BINS = 64
FIELDS = (("count", "elements"), ("finite", "finite"), ("min", "min"), ("max", "max"), ("mean", "mean"),
          ("std", "std"), ("zeros", "zeros"), ("sparsity", "sparsity"), ("nan", "NaN"), ("pos_inf", "+Inf"),
          ("neg_inf", "−Inf"))
BAR_COLOR = QColor(0x4C, 0x72, 0xB0)


def stats_job(tf: TensorFile, tensor: Tensor, dtype_name: str, cache: DecodedCache | None, bins: int = BINS):
    """A job computing the statistics of ``tensor`` read as ``dtype_name``: raw dense data straight from the
    map (each chunk released from memory once summarised, see :mod:`.mapped`), zstd data from the decoded
    cache when it is there, everything else streamed by :func:`tensor_stats`."""
    shown = presented_as(tensor, dtype_name)

    def job(task) -> TensorStats:
        kw = {"bins": bins, "cancelled": task.is_cancelled, "progress": task.report_progress}
        if view_kind(tensor) == "dense":
            component = tensor.components["data"]
            cached = cache.get(data_key(tf, tensor, "dense")) if cache is not None else None
            if cached is not None or component.encoding == "raw":
                data = load_dense(tf, tensor, dtype_name, cache=cache)
                return compute_stats(lambda: _released_chunks(data.array), dtype_name=dtype_name,
                                     total=data.array.size, **kw)
        return tensor_stats(tf, shown, **kw)

    return job


def _released_chunks(array: np.ndarray):
    for chunk in array_chunks(array):
        yield chunk
        release(chunk)


def format_stat(key: str, stats: TensorStats) -> str:
    if key == "sparsity":
        return f"{stats.sparsity * 100:.4g} %"
    value = getattr(stats, key)
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.7g}"
    return f"{value:,}"


class StatsView(QWidget):
    """Numbers on the left, histogram on the right; ``set_tensor`` starts the computation."""

    computed = Signal(object)

    def __init__(self, pool=None, cache: DecodedCache | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache = cache
        self.stats: TensorStats | None = None
        self.title = QLabel()
        self.title.setObjectName("statsTitle")
        self.progress = DelayedProgress(width=16777215)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(3)
        self.values: dict[str, QLabel] = {}
        for row, (key, label) in enumerate(FIELDS):
            name = QLabel(label)
            value = QLabel("—")
            value.setFont(mono)
            value.setObjectName(f"stat_{key}")
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            self.values[key] = value
        grid.setRowStretch(len(FIELDS), 1)
        self.log_counts = QCheckBox("log counts")
        self.log_counts.setObjectName("histLog")
        self.log_counts.toggled.connect(self._draw)
        grid.addWidget(self.log_counts, len(FIELDS) + 1, 0, 1, 2)
        numbers = QWidget()
        numbers.setLayout(grid)
        numbers.setMinimumWidth(220)

        self.plot = pg.PlotWidget(background=palette_colors()[0])
        style_plot(self.plot.getPlotItem())
        self.plot.setLabel("bottom", "value")
        self.plot.setLabel("left", "count")
        self.plot.showGrid(x=False, y=True, alpha=0.15)
        self.bars = pg.PlotDataItem(stepMode="center", fillLevel=0, brush=pg.mkBrush(BAR_COLOR),
                                    pen=pg.mkPen(BAR_COLOR.darker(130)))
        self.plot.addItem(self.bars)

        body = QHBoxLayout()
        body.addWidget(numbers)
        body.addWidget(self.plot, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.progress)
        layout.addLayout(body, 1)
        self.slot = JobSlot(pool, self)
        self.slot.progress.connect(self._progress)

    def set_tensor(self, tf: TensorFile, tensor: Tensor, dtype_name: str | None = None) -> None:
        dtype_name = dtype_name or tensor.dtype
        self.clear(f"{tensor.name} · {dtype_name} · computing…")
        self.progress.set_busy(True)
        self.slot.start(stats_job(tf, tensor, dtype_name, self.cache), lambda s: self._done(tensor, dtype_name, s),
                        failed=lambda text: self._failed(tensor, text))

    def clear(self, title: str = "") -> None:
        self.slot.cancel()
        self.stats = None
        self.title.setText(title)
        self.progress.set_busy(False)
        for label in self.values.values():
            label.setText("—")
        self.bars.setData([], [])

    def _progress(self, done, total) -> None:
        self.progress.set_progress(done, total)

    def _done(self, tensor: Tensor, dtype_name: str, stats: TensorStats) -> None:
        self.stats = stats
        self.progress.set_busy(False)
        self.title.setText(f"{tensor.name} · {dtype_name} · {stats.count:,} elements")
        for key, label in self.values.items():
            label.setText(format_stat(key, stats))
        self._draw()
        self.computed.emit(stats)

    def _draw(self) -> None:
        stats = self.stats
        if stats is None or stats.histogram is None:
            self.bars.setData([], [])
            return
        counts = stats.histogram.astype(np.float64)
        log = self.log_counts.isChecked()
        self.plot.setLogMode(y=False)
        shown = np.log10(counts + 1) if log else counts
        self.plot.setLabel("left", "log10(count + 1)" if log else "count")
        self.bars.setData(np.asarray(stats.bin_edges, np.float64), shown)

    def _failed(self, tensor: Tensor, text: str) -> None:
        self.progress.set_busy(False)
        self.title.setText(f"{tensor.name}: statistics unavailable — {text}")

    def shutdown(self) -> None:
        self.slot.shutdown()
