"""The Inspect area: the right view for the selected tensor, its statistics, and the whole-file table.

The view is the best fit in :attr:`InspectPanel.views` (a :class:`~ztviewer.session.view_registry.ViewRegistry`):
dense → heatmap (or line plot), sparse_csr / sparse_coo → spy plot, tensor_train → TT browser, layouts ztviewer
shows structurally only → a message saying so; more views register there with their own priorities. zstd data is
decoded on a worker (with progress) into the shared, byte-bounded cache before it is shown.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from ztviewer.analysis.spy_sources import DensePlaneSource
from ztviewer.codec.errors import CodecError
from ztviewer.codec.model import Component, Problem, Tensor, TensorFile
from ztviewer.session.decode_cache import DecodedCache, data_key, shared_cache
from ztviewer.session.file_session import FileSession
from ztviewer.session.formatting import human_bytes, shape_text
from ztviewer.session.inspect_data import (
    DenseData,
    describe_error,
    expected_nbytes,
    load_dense,
    load_sparse,
    load_tt,
    presentations,
)
from ztviewer.session.structural import structural_note
from ztviewer.session.view_registry import (
    BUILTIN_PRIORITIES,
    DENSE,
    QUANTIZED,
    SPARSE,
    STRUCTURAL,
    TT,
    ViewRegistry,
    view_kind,
)

from .file_stats import FileStatsView
from .heatmap import HeatmapView
from .runner import JobSlot
from .sparse_view import SparseView
from .stats_view import StatsView
from .tt_compare import tt_reference_choices
from .tt_view import TTView

#: how a registered view is shown: ``show(tensor_file, tensor, presentation choices)`` (raises on damage).
ShowView = Callable[[TensorFile, Tensor, list[str]], None]


class InspectPanel(QWidget):
    """Tabs "View", "Statistics" and "File statistics" for the file and tensor given by :meth:`show_item`.

    ``tensor_activated(Tensor)`` asks the owner to select a tensor (double-click in the file table);
    ``message(str)`` is for the status bar; ``problem_found(Problem)`` reports what decoding the shown tensor
    found wrong (the file's Problems panel, tree and status bar list it).
    """

    tensor_activated = Signal(object)
    message = Signal(str)
    problem_found = Signal(object)

    def __init__(self, pool=None, cache: DecodedCache | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspectPanel")
        self.cache = cache if cache is not None else shared_cache()
        self.session: FileSession | None = None
        self.tensor_file: TensorFile | None = None
        self.tensor: Tensor | None = None
        self.dtype_name: str | None = None
        self.heatmap = HeatmapView(pool)
        self.sparse = SparseView(pool)
        self.tt = TTView(pool)
        self.note = QLabel()
        self.note.setObjectName("inspectNote")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setWordWrap(True)
        self.loading = QWidget()
        self.loading_label = QLabel()
        self.loading_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.loading_bar = QProgressBar()
        self.loading_bar.setMaximumWidth(360)
        box = QVBoxLayout(self.loading)
        box.addStretch(1)
        box.addWidget(self.loading_label)
        box.addWidget(self.loading_bar, 0, Qt.AlignmentFlag.AlignHCenter)
        box.addStretch(1)
        self.stack = QStackedWidget()
        for widget in (self.note, self.loading, self.heatmap, self.sparse, self.tt):
            self.stack.addWidget(widget)
        self.stats = StatsView(pool, self.cache)
        self.file_stats = FileStatsView(pool)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("inspectTabs")
        self.tabs.addTab(self.stack, "View")
        self.tabs.addTab(self.stats, "Statistics")
        self.tabs.addTab(self.file_stats, "File statistics")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self.loader = JobSlot(pool, self)
        self.loader.progress.connect(self._loading_progress)
        self._stats_for: tuple | None = None
        self.tabs.currentChanged.connect(self._tab_changed)
        self.file_stats.tensor_activated.connect(self.tensor_activated)
        self.heatmap.view_as_sparse.connect(self.view_as_sparse)
        self.heatmap.presentation_changed.connect(self._presentation_changed)
        self.sparse.back.connect(lambda: self.stack.setCurrentWidget(self.heatmap))
        for view in (self.heatmap, self.sparse, self.tt):
            view.message.connect(self.message)
        for slot in self.findChildren(JobSlot):   # every view's jobs: a decode error becomes a problem
            slot.problem.connect(self._report_problem)
        self.views: ViewRegistry[ShowView] = ViewRegistry()
        for key, show in ((DENSE, self._show_dense), (SPARSE, self._show_sparse), (TT, self._show_tt),
                          (QUANTIZED, self._show_quantized), (STRUCTURAL, self._show_structural)):
            self.views.register(key, BUILTIN_PRIORITIES[key], show)
        self.show_note("Select a tensor to inspect its values.")

    # -- input ---------------------------------------------------------------------------------------------
    def set_session(self, session: FileSession) -> None:
        """Show the tensors of an open file's session: its decode cache, and its plane state on the heatmap."""
        self.session = session
        self.cache = self.stats.cache = session.cache
        self.heatmap.axes.bind(session.dims)
        self.set_file(session.tensor_file)

    def set_file(self, tensor_file: TensorFile | None) -> None:
        if tensor_file is self.tensor_file:
            return
        self.tensor_file = tensor_file
        self.tensor = None
        self.file_stats.set_file(tensor_file, start=self.tabs.currentWidget() is self.file_stats)
        self.show_note("Select a tensor to inspect its values.")
        self.stats.clear()

    def show_item(self, item, tensor: Tensor | None = None) -> None:
        """Show a tree item: a Tensor (or its Component's tensor, passed as ``tensor``); anything else clears."""
        if isinstance(item, Component) and tensor is not None:
            item = tensor
        if not isinstance(item, Tensor):
            self.tensor = None
            self.loader.cancel()
            self.show_note("Select a tensor to inspect its values.")
            self.stats.clear()
            return
        if item is self.tensor:
            return
        self.show_tensor(item)

    def show_tensor(self, tensor: Tensor, dtype_name: str | None = None) -> None:
        tf = self.tensor_file
        if tf is None:
            return
        self.tensor = tensor
        choices = presentations(tensor)
        self.dtype_name = dtype_name or choices[0]
        self.loader.cancel()
        entry = self.views.best(tensor)
        try:
            (entry.view if entry is not None else self._show_structural)(tf, tensor, choices)
        except Exception as exc:  # a damaged tensor: say why, never a traceback
            if isinstance(exc, CodecError):
                self._report_problem(exc.to_problem())
            self.show_note(f"Cannot show <b>{tensor.name}</b>: {describe_error(exc)}")
        self._stats_for = None
        self._tab_changed()

    def _title(self, tensor: Tensor) -> str:
        return f"{tensor.name}  ·  {self.dtype_name}  ·  {shape_text(tensor.shape)}  ·  {tensor.layout}"

    def _show_sparse(self, tf: TensorFile, tensor: Tensor, choices: list[str]) -> None:
        self.stack.setCurrentWidget(self.sparse)
        coo = tuple(tensor.shape) if tensor.layout == "sparse_coo" else None
        cache = self.cache
        self.sparse.set_sparse(self._title(tensor), lambda ctx: load_sparse(tf, tensor, cache=cache,
                                                                            cancelled=ctx.is_cancelled), coo)

    def _show_tt(self, tf: TensorFile, tensor: Tensor, choices: list[str]) -> None:
        self.tt.compare.candidates = lambda shape: tt_reference_choices(tf, tensor, shape, self.cache)
        self.tt.set_data(load_tt(tf, tensor), tensor.name)
        self.stack.setCurrentWidget(self.tt)

    def _show_quantized(self, tf: TensorFile, tensor: Tensor, choices: list[str]) -> None:
        from ztviewer.codec import quantized

        q = quantized.quantized_group(tensor)          # a DecodeError here is shown as a note by show_tensor
        budget = self.cache.budget if self.cache is not None else None
        if budget is not None and q.codes * 4 > budget:
            self.show_note(f"<b>{tensor.name}</b> dequantizes to {human_bytes(q.codes * 4)}, more than the inspect "
                           f"cache budget of {human_bytes(budget)} (set ZTVIEWER_INSPECT_CACHE to raise it).")
            return
        self.loading_label.setText(f"Dequantizing {tensor.name} ({q.bits}-bit codes, groups of {q.group_size})…")
        self.loading_bar.setRange(0, 0)
        self.stack.setCurrentWidget(self.loading)
        self.loader.start(lambda ctx: DenseData(quantized.dequantize(tf, tensor, cancelled=ctx.is_cancelled),
                                                "float32"),
                          lambda data: self._quantized_ready(data, tensor),
                          failed=lambda text: self.show_note(f"Cannot dequantize <b>{tensor.name}</b>: {text}"))

    def _quantized_ready(self, data: DenseData, tensor: Tensor) -> None:
        from ztviewer.codec.quantized import RULE_TEXT

        if tensor is not self.tensor:
            return
        self.stack.setCurrentWidget(self.heatmap)
        self.heatmap.set_data(data, f"{tensor.name} ({RULE_TEXT})", ["float32"])
        self.message.emit(f"{tensor.name}: {RULE_TEXT}")

    def _show_structural(self, tf: TensorFile, tensor: Tensor, choices: list[str]) -> None:
        self.show_note(structural_note(tensor))

    def _show_dense(self, tf: TensorFile, tensor: Tensor, choices: list[str]) -> None:
        dtype_name, cache = self.dtype_name, self.cache
        component = tensor.components["data"]
        if component.encoding == "raw" or data_key(tf, tensor, "dense") in cache:
            self._dense_ready(load_dense(tf, tensor, dtype_name, cache=cache), tensor, choices)
            return
        size = expected_nbytes(tensor)
        budget = cache.budget if cache is not None else None
        if size is not None and budget is not None and size > budget:   # streamed, never whole in memory
            from ztviewer.session.streamed_data import StreamedData

            self._dense_ready(StreamedData(tf, tensor, dtype_name), tensor, choices)
            self.message.emit(f"{tensor.name} decodes to {human_bytes(size)}, more than the inspect cache: "
                              "its planes are decoded as they are shown (last two axes)")
            return
        self.loading_label.setText(f"Decoding {tensor.name} ({component.encoding}, "
                                   f"{human_bytes(size) if size else 'size unknown'})…")
        self.loading_bar.setRange(0, 0)
        self.stack.setCurrentWidget(self.loading)
        self.loader.start(lambda ctx: load_dense(tf, tensor, dtype_name, cache=cache, cancelled=ctx.is_cancelled,
                                                 progress=ctx.report_progress),
                          lambda data: self._dense_ready(data, tensor, choices),
                          failed=lambda text: self.show_note(f"Cannot decode <b>{tensor.name}</b>: {text}"))

    def _dense_ready(self, data, tensor: Tensor, choices: list[str]) -> None:
        if tensor is not self.tensor:
            return
        self.stack.setCurrentWidget(self.heatmap)
        self.heatmap.set_data(data, tensor.name, choices)
        self.heatmap.controls.present_as.blockSignals(True)
        self.heatmap.controls.present_as.setCurrentText(data.dtype_name)
        self.heatmap.controls.present_as.blockSignals(False)

    def view_as_sparse(self) -> None:
        plane = self.heatmap.plane()
        if plane is None or self.heatmap.data is None:
            return
        axes = self.heatmap.axes.axes()
        title = f"{self.heatmap.name} as sparse (exact zeros are structural) · axes {axes[0]} × {axes[1]}"
        self.sparse.set_dense_plane(title, DensePlaneSource(plane, self.heatmap.data.dtype_name))
        self.stack.setCurrentWidget(self.sparse)

    def _presentation_changed(self, dtype_name: str) -> None:
        if self.tensor is not None and dtype_name and dtype_name != self.dtype_name:
            self.show_tensor(self.tensor, dtype_name)

    def _report_problem(self, problem: Problem) -> None:
        if problem.tensor is None and self.tensor is not None:
            problem = dataclasses.replace(problem, tensor=self.tensor.name)
        self.problem_found.emit(problem)

    def show_note(self, html: str) -> None:
        self.heatmap.shutdown_jobs()
        self.note.setText(html)
        self.stack.setCurrentWidget(self.note)

    def _loading_progress(self, done, total) -> None:
        if total:
            self.loading_bar.setRange(0, 1000)
            self.loading_bar.setValue(int(1000 * done / total))

    # -- lazily computed tabs ------------------------------------------------------------------------------
    def _tab_changed(self, *args) -> None:
        current = self.tabs.currentWidget()
        if current is self.file_stats and not self.file_stats.started:
            self.file_stats.start()
        if current is self.stats:
            key = (id(self.tensor), self.dtype_name)
            if self.tensor is None or self.tensor_file is None:
                self.stats.clear("Select a tensor to see its statistics.")
            elif key != self._stats_for:
                self._stats_for = key
                if view_kind(self.tensor) == STRUCTURAL:
                    self.stats.clear(f"{self.tensor.name}: no values to summarise (layout {self.tensor.layout})")
                else:
                    self.stats.set_tensor(self.tensor_file, self.tensor, self.dtype_name)

    def shutdown(self) -> None:
        """Stop every job and forget the file's decoded data (its tab is closing)."""
        self.loader.shutdown()
        for view in (self.heatmap, self.sparse, self.tt, self.stats, self.file_stats):
            view.shutdown()
        if self.tensor_file is not None:
            self.cache.drop_file(self.tensor_file)
