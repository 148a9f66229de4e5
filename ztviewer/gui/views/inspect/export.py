"""Export: the current view as PNG / SVG, the current 2-D slice or the whole tensor as .npy / CSV.

Slices and tensors are written strip by strip (an ``.npy`` is filled through a memory map), so exporting a
1 GiB plane never holds it in memory; those writes run on a worker.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from PySide6.QtCore import QPoint, QRectF, QSize, Signal
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QFileDialog, QMenu, QToolButton, QWidget

from ztviewer.codec import decode
from ztviewer.codec.dtypes import DTYPES

from .runner import JobSlot

STRIP_BYTES = 16 << 20


def save_png(widget: QWidget, path: str) -> bool:
    return widget.grab().save(path, "PNG")


def save_svg(widget: QWidget, path: str, title: str = "ztviewer view") -> None:
    generator = QSvgGenerator()
    generator.setFileName(path)
    size = widget.size()
    generator.setSize(QSize(size.width(), size.height()))
    generator.setViewBox(QRectF(0, 0, size.width(), size.height()))
    generator.setTitle(title)
    painter = QPainter(generator)
    try:
        QWidget.render(widget, painter, QPoint(0, 0))  # the widget tree (QGraphicsView overrides render)
    finally:
        painter.end()


class Plane(Protocol):
    """A 2-D array, or anything else with a ``shape`` and 2-D slicing (a tensor train's :class:`TTPlane`)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __getitem__(self, key: tuple[slice, slice], /) -> Any: ...


@dataclass(frozen=True, slots=True)
class SliceSource:
    """A 2-D plane and how to read its bits."""

    plane: Plane
    dtype_name: str

    @property
    def shape(self) -> tuple[int, int]:
        rows, cols = self.plane.shape
        return rows, cols


def natural(values: np.ndarray, dtype_name: str) -> np.ndarray:
    """Stored bits → the values a user means (native order, bfloat16/float8 as float32, bool as bool)."""
    values = np.asarray(values)
    if dtype_name in DTYPES:
        return decode.present(values, dtype_name)
    return values if values.dtype.isnative else values.astype(values.dtype.newbyteorder("="))


def strips(source: SliceSource, cancelled: Callable[[], bool] | None = None, first: int = 0,
           end: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """Rows ``first`` up to ``end`` (default: the last) of the plane, a bounded strip at a time, as values."""
    rows, cols = source.shape
    width = max(1, getattr(source.plane, "dtype", np.dtype(np.float64)).itemsize * max(cols, 1))
    step = max(1, STRIP_BYTES // width)
    stop = rows if end is None else min(end, rows)
    for r in range(first, stop, step):
        if cancelled is not None and cancelled():
            from ztviewer.codec.errors import Cancelled

            raise Cancelled()
        yield r, natural(np.asarray(source.plane[r:min(r + step, stop), 0:cols]), source.dtype_name)


def write_npy(source: SliceSource, path: str, cancelled=None, progress=None) -> str:
    rows, cols = source.shape
    out = None
    for r, block in strips(source, cancelled):
        if out is None:
            out = np.lib.format.open_memmap(path, mode="w+", dtype=block.dtype, shape=(rows, cols))
        out[r:r + len(block)] = block
        if progress is not None:
            progress(r + len(block), rows)
    if out is None:
        np.save(path, np.zeros((rows, cols)))
    else:
        out.flush()
        del out
    return path


def write_csv(source: SliceSource, path: str, cancelled=None, progress=None) -> str:
    rows, _ = source.shape
    with open(path, "w", encoding="ascii", newline="") as fh:
        for r, block in strips(source, cancelled):
            np.savetxt(fh, block, delimiter=",", fmt=_fmt(block.dtype))
            if progress is not None:
                progress(r + len(block), rows)
    return path


def _fmt(dtype: np.dtype) -> str:
    if dtype.kind in "iub":
        return "%d"
    digits = 17 if (dtype.itemsize >= 8 and dtype.kind == "f") or dtype.itemsize >= 16 else 9
    return f"%.{digits}g"


def write_tensor_npy(chunks: Iterator[np.ndarray], shape: tuple[int, ...], path: str, cancelled=None,
                     progress=None) -> str:
    """Stream flat C-order chunks of a tensor into an ``.npy`` file of ``shape`` (filled through a map)."""
    total = math.prod(shape)
    out: np.memmap | None = None
    flat = np.empty(0)
    pos = 0
    for chunk in chunks:
        if cancelled is not None and cancelled():
            from ztviewer.codec.errors import Cancelled

            raise Cancelled()
        chunk = np.asarray(chunk).reshape(-1)
        if out is None:
            out = np.lib.format.open_memmap(path, mode="w+", dtype=chunk.dtype, shape=tuple(shape))
            flat = out.reshape(-1)
        flat[pos:pos + chunk.size] = chunk
        pos += chunk.size
        if progress is not None:
            progress(pos, total)
    if out is None:
        np.save(path, np.zeros(shape))
        return path
    out.flush()
    del out, flat
    return path


def tensor_export_job(data, path: str):
    """A job writing the whole tensor of a :class:`~.data.DenseData` / :class:`~.data.TTData` to ``path``
    (dense data streamed from the map, a tensor train reconstructed chunk by chunk), or None."""
    from ztviewer.analysis.stats import array_chunks
    from ztviewer.analysis.tt_view import tt_chunks

    chunks: Callable[[], Iterator[np.ndarray]]
    if hasattr(data, "array"):
        chunks = lambda: (natural(c, data.dtype_name) for c in array_chunks(data.array))  # noqa: E731
    elif hasattr(data, "cores"):
        chunks = lambda: tt_chunks(data.cores)  # noqa: E731
    else:
        return None
    return lambda task: write_tensor_npy(chunks(), data.shape, path, task.is_cancelled, task.report_progress)


class ExportButton(QToolButton):
    """An "Export" menu; the owning view supplies what there is to export through callables.

    ``widget()`` → the widget to save as an image; ``slice_source()`` → :class:`SliceSource` or None;
    ``tensor_job(path)`` → None or a job ``f(task)`` writing the whole tensor to ``path``.
    """

    message = Signal(str)

    def __init__(self, widget: Callable[[], QWidget | None], slice_source: Callable[[], SliceSource | None],
                 tensor_job: Callable[[str], Callable | None] | None = None, name: str = "view",
                 pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("Export")
        self.setObjectName("exportButton")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self._widget, self._slice, self._tensor_job, self.name = widget, slice_source, tensor_job, name
        self.slot = JobSlot(pool, self)
        menu = QMenu(self)
        menu.addAction("View as PNG…", lambda: self._ask("PNG image (*.png)", ".png", self.export_png))
        menu.addAction("View as SVG…", lambda: self._ask("SVG drawing (*.svg)", ".svg", self.export_svg))
        menu.addSeparator()
        menu.addAction("Slice as .npy…", lambda: self._ask("NumPy array (*.npy)", ".npy", self.export_slice_npy))
        menu.addAction("Slice as CSV…", lambda: self._ask("CSV (*.csv)", ".csv", self.export_slice_csv))
        if tensor_job is not None:
            menu.addAction("Tensor as .npy…", lambda: self._ask("NumPy array (*.npy)", ".npy", self.export_tensor))
        self.setMenu(menu)

    def _ask(self, filter_: str, suffix: str, action: Callable[[str], None]) -> None:
        dialog = QFileDialog(self.window(), "Export", self.name.replace("/", "_") + suffix, filter_)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(suffix.lstrip("."))
        dialog.fileSelected.connect(action)
        dialog.finished.connect(dialog.deleteLater)
        dialog.open()

    def export_png(self, path: str) -> None:
        widget = self._widget()
        if widget is not None:
            save_png(widget, path)
            self.message.emit(f"Saved {os.path.basename(path)}")

    def export_svg(self, path: str) -> None:
        widget = self._widget()
        if widget is not None:
            save_svg(widget, path, self.name)
            self.message.emit(f"Saved {os.path.basename(path)}")

    def _run(self, job, path: str) -> None:
        self.message.emit(f"Writing {os.path.basename(path)}…")
        self.slot.start(job, lambda _: self.message.emit(f"Saved {os.path.basename(path)}"),
                        failed=lambda text: self.message.emit(f"Export failed: {text}"))

    def export_slice_npy(self, path: str):
        source = self._slice()
        if source is not None:
            self._run(lambda t: write_npy(source, path, t.is_cancelled, t.report_progress), path)

    def export_slice_csv(self, path: str):
        source = self._slice()
        if source is not None:
            self._run(lambda t: write_csv(source, path, t.is_cancelled, t.report_progress), path)

    def export_tensor(self, path: str):
        job = self._tensor_job(path) if self._tensor_job is not None else None
        if job is not None:
            self._run(job, path)
