"""A selected pair where a side is sparse (CSR / COO, or one sparse and one dense): spy plots of A and B with
linked zoom, and Δ = B − A of the differing entries as a spy plot (zoomed in, markers coloured by Δ).

Nothing is densified: sparse sides are drawn from their entries (the inspect :class:`SparseView`), Δ comes
from the diff engine's entry-wise comparison (:func:`ztviewer.analysis.diff.entries.differing_entries`,
bounded), a dense side from its plane's non-zero elements.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ztviewer.analysis.diff.entries import DifferingEntries, differing_entries
from ztviewer.analysis.spy_sources import DensePlaneSource
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.sparse import SparseCOO
from ztviewer.session.decode_cache import DecodedCache
from ztviewer.session.inspect_data import load_dense, load_sparse

from ..views.inspect.sparse_view import SparseView
from .side_columns import side_columns

SPARSE_LAYOUTS = ("sparse_csr", "sparse_coo")
SIDES = ("A", "B", "Δ")


def delta_coo(entries: DifferingEntries) -> SparseCOO:
    """The differing entries as a COO tensor of B − A (what the spy view draws)."""
    dtype = "complex128" if entries.delta.dtype.kind == "c" else "float64"
    return SparseCOO(entries.shape, entries.coords, entries.delta, dtype)


class SparsePairView(QWidget):
    """Spy plots of A, B and their differing entries; zoom and pan move all three."""

    def __init__(self, pool=None, cache: DecodedCache | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cache = cache
        self.spies = {side: SparseView(pool) for side in SIDES}
        self.entries: DifferingEntries | None = None
        a_view = self.spies["A"].plot.view
        for side in ("B", "Δ"):
            self.spies[side].plot.view.setXLink(a_view)
            self.spies[side].plot.view.setYLink(a_view)
        self.spies["Δ"].rendered.connect(self._delta_rendered)
        split, self.labels = side_columns(self.spies, " = B − A at the differing elements", "compareSpyTitle")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split, 1)

    def show_pair(self, tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, name: str) -> None:
        self.entries = None
        self.labels["Δ"].setText("<b>Δ</b> = B − A at the differing elements (comparing…)")
        for side, tf, tensor in (("A", tf_a, a), ("B", tf_b, b)):
            self._show_side(self.spies[side], tf, tensor, f"{name} ({side}, {tensor.layout})")
        if tuple(a.shape) != tuple(b.shape):
            self.labels["Δ"].setText(f"<b>Δ</b>: shapes differ: {list(a.shape)} vs {list(b.shape)}")
            self.spies["Δ"].show_source("", lambda ctx: _refuse(a, b))
            return

        def load(ctx) -> SparseCOO:
            entries = differing_entries(tf_a, a, tf_b, b, cancelled=ctx.is_cancelled)
            self.entries = entries
            return delta_coo(entries)
        shape = tuple(int(d) for d in a.shape)
        self.spies["Δ"].set_sparse(f"{name} (B − A)", load, coo_shape=shape if len(shape) > 2 else None)

    def _show_side(self, view: SparseView, tf: TensorFile, tensor: Tensor, title: str) -> None:
        cache = self.cache
        if tensor.layout in SPARSE_LAYOUTS:
            coo_shape = tuple(int(d) for d in tensor.shape) if tensor.layout == "sparse_coo" else None
            view.set_sparse(title, lambda ctx: load_sparse(tf, tensor, cache=cache, cancelled=ctx.is_cancelled),
                            coo_shape)
            return

        def dense_source(ctx) -> DensePlaneSource:
            data = load_dense(tf, tensor, cache=cache, cancelled=ctx.is_cancelled)
            ndim = len(data.shape)
            plane = data.plane((0, 1), dict.fromkeys(range(2, ndim), 0))
            return DensePlaneSource(plane, data.dtype_name)
        if len(tensor.shape) > 2:
            title += " — axes 0, 1; the others at 0"
        view.show_source(title, dense_source)

    def _delta_rendered(self) -> None:
        entries = self.entries
        if entries is None:
            return
        text = f"<b>Δ</b> = B − A at the {entries.count:,} differing elements"
        if entries.truncated:
            text += " (the first ones only: too many to keep)"
        self.labels["Δ"].setText(text)

    def centre(self, row: int, col: int, radius: int = 8) -> None:
        """Zoom all three onto element (row, col)."""
        self.spies["A"].plot.view.setRange(QRectF(col - radius, row - radius, 2 * radius, 2 * radius), padding=0)

    def view_range(self, side: str) -> tuple[list[float], list[float]]:
        return self.spies[side].plot.view.viewRange()

    def shutdown(self) -> None:
        for view in self.spies.values():
            view.shutdown()


def _refuse(a: Tensor, b: Tensor):
    raise ValueError(f"shapes differ: {list(a.shape)} vs {list(b.shape)}")
