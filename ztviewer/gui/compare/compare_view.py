"""A Compare tab: two aligned trees of pairs (A | status, B and the numbers), the attribute changes, and the
selected pair's heatmaps; the comparison runs on a worker and rows fill in as pairs complete."""
from __future__ import annotations

import os

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec.text import printable
from ztviewer.session.comparison import ComparisonSession
from ztviewer.session.formatting import plural
from ztviewer.workers.compare import CompareTask, ComparisonOpened

from .attributes_model import AttributeChangesModel
from .pair_view import PairView
from .pairs_model import (
    FIRST_B,
    FIRST_METRIC,
    HEADERS,
    PAIR_ROLE,
    STATUS_TEXT,
    ComparePairsModel,
    verdict_color,
)
from .tab import CompareTab


def _tree(name: str) -> QTreeView:
    tree = QTreeView()
    tree.setObjectName(name)
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setAlternatingRowColors(True)
    tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    tree.setSortingEnabled(True)
    tree.header().setSortIndicatorShown(True)
    tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)  # equal heights keep rows aligned
    return tree


class CompareView(CompareTab):
    """One comparison of ``path_a`` (the reference) with ``path_b``; :meth:`start` runs it.

    Signals (from :class:`CompareTab`): ``status_message(str)``, ``ended(str)`` (done / cancelled / failed).
    """

    def __init__(self, path_a: str, path_b: str, pool=None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self.pool = pool
        self.session = ComparisonSession(os.path.abspath(path_a), os.path.abspath(path_b))
        self.task: CompareTask | None = None
        self.model = ComparePairsModel(self.session, self)
        self.attributes_model = AttributeChangesModel(self.session, self)

        self.paths = QLabel()
        self.paths.setObjectName("comparePaths")
        self.paths.setTextFormat(Qt.TextFormat.PlainText)
        self.paths.setText(f"A: {printable(self.session.path_a)}\nB: {printable(self.session.path_b)}")
        self.only_differences = QCheckBox("Only differences")
        self.only_differences.setObjectName("compareOnlyDifferences")
        self.only_differences.setToolTip("Hide pairs whose content, name and attributes are the same")
        self.only_differences.toggled.connect(self.session.set_only_differences)
        self.summary = QLabel()
        self.summary.setObjectName("compareSummary")
        self.progress = QProgressBar()
        self.progress.setObjectName("compareProgress")
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("compareCancel")
        self.cancel_button.clicked.connect(self.cancel)

        self.tree_a = _tree("compareTreeA")
        self.tree_b = _tree("compareTreeB")
        for tree in (self.tree_a, self.tree_b):
            tree.setModel(self.model)
        self.tree_b.setSelectionModel(self.tree_a.selectionModel())
        for column in range(len(HEADERS)):
            self.tree_a.setColumnHidden(column, column >= FIRST_B)
            self.tree_b.setColumnHidden(column, column < FIRST_B)
        self.tree_a.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree_a.verticalScrollBar().valueChanged.connect(self.tree_b.verticalScrollBar().setValue)
        self.tree_b.verticalScrollBar().valueChanged.connect(self.tree_a.verticalScrollBar().setValue)
        self.tree_a.header().sortIndicatorChanged.connect(lambda c, o: self._sync_indicator(self.tree_b, c, o))
        self.tree_b.header().sortIndicatorChanged.connect(lambda c, o: self._sync_indicator(self.tree_a, c, o))
        self.tree_a.header().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.tree_a.setRootIsDecorated(True)                 # the group arrows; the B tree follows its expansion
        self._collapsed: set[str] = set()                     # group prefixes the user closed (kept across resets)
        for tree, other in ((self.tree_a, self.tree_b), (self.tree_b, self.tree_a)):
            tree.expanded.connect(lambda index, other=other: self._expanded(other, index, True))
            tree.collapsed.connect(lambda index, other=other: self._expanded(other, index, False))
        self.tree_a.selectionModel().currentRowChanged.connect(self._row_changed)
        self.model.modelReset.connect(self._model_reset)
        self.model.layoutChanged.connect(self._restore_selection)
        self._size_columns()
        self.attributes = QTreeView()
        self.attributes.setObjectName("compareAttributes")
        self.attributes.setModel(self.attributes_model)
        self.attributes.setRootIsDecorated(False)
        self.attributes.setAlternatingRowColors(True)
        self.pair_view = PairView(self.session, pool)

        top = QHBoxLayout()
        top.addWidget(self.paths, 1)
        top.addWidget(self.only_differences)
        top.addWidget(self.progress)
        top.addWidget(self.cancel_button)
        trees = QSplitter(Qt.Orientation.Horizontal)
        trees.setObjectName("compareTrees")
        trees.addWidget(self.tree_a)
        trees.addWidget(self.tree_b)
        trees.setSizes([320, 680])
        lists = QTabWidget()
        lists.setObjectName("compareLists")
        lists.addTab(trees, "Tensors")
        lists.addTab(self.attributes, "Attributes")
        self.lists = lists
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(lists)
        body.addWidget(self.pair_view)
        body.setStretchFactor(0, 2)
        body.setStretchFactor(1, 3)
        body.setSizes([360, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(body, 1)

        self.session.pairs_added.connect(lambda _n: self._update_summary())
        self.session.state_changed.connect(self._state_changed)
        self.session.progress.connect(self._progress)
        self._update_summary()

    def _size_columns(self) -> None:
        """Names get room, numbers their width: in characters of the font, so any scale fits."""
        char = self.fontMetrics().horizontalAdvance("0")
        widths = {0: 34, 1: 9, 2: 11, FIRST_B: 13, FIRST_B + 1: 18, FIRST_B + 2: 8, FIRST_B + 3: 9,
                  FIRST_METRIC: 17, len(HEADERS) - 1: 40}
        for column in range(len(HEADERS)):
            tree = self.tree_a if column < FIRST_B else self.tree_b
            tree.header().resizeSection(column, char * widths.get(column, 11))

    def _fit_numbers(self) -> None:
        """Status and number columns as wide as what they show (rows in view and header), so all fit."""
        char = self.fontMetrics().horizontalAdvance("0")
        for column in range(FIRST_B, len(HEADERS) - 1):
            if column in (FIRST_B + 1,):
                continue
            self.tree_b.resizeColumnToContents(column)
            header = self.tree_b.header()
            header.resizeSection(column, min(header.sectionSize(column), char * 24))

    # -- running -----------------------------------------------------------------------------------------------
    def start(self) -> CompareTask:
        task = CompareTask(self.session.path_a, self.session.path_b)
        self.task = task
        task.signals.partial.connect(self._partial)
        task.signals.progress.connect(lambda done, total: self.session.set_progress(done, total))
        task.signals.finished.connect(lambda _count: self.session.finish("done"))
        task.signals.cancelled.connect(lambda: self.session.finish("cancelled"))
        task.signals.failed.connect(lambda message: self.session.finish("failed", message))
        self.status_message.emit(f"Comparing {self.session.path_a} with {self.session.path_b}…")
        task.start(self.pool)
        return task

    def cancel(self) -> None:
        if self.task is not None and not self.task.is_done:
            self.task.cancel()

    def _partial(self, value) -> None:
        if isinstance(value, ComparisonOpened):
            self.session.set_files(value.tf_a, value.tf_b, value.attributes)
            self.attributes_model.refresh()
        else:
            self.session.add_pairs(value)
            if self.session.selected is None and self.model.rowCount():
                self.tree_a.setCurrentIndex(self.model.first_pair())

    def _progress(self, progress: tuple[int, int]) -> None:
        done, total = progress
        self.progress.setValue(int(1000 * done / total) if total else 0)

    def _state_changed(self, state: str) -> None:
        running = state in ("opening", "running")
        self.cancel_button.setEnabled(running)
        self.progress.setVisible(running)
        self._update_summary()
        if state == "done":
            self._fit_numbers()
        if state == "failed":
            self.status_message.emit(f"Compare failed: {self.session.message}")
        if not running:
            self.ended.emit(state)

    def _update_summary(self) -> None:
        counts = self.session.counts()
        parts = [f"<span style='color:{verdict_color(v).name()}'>{n} {STATUS_TEXT[v]}</span>"
                 for v, n in counts.items() if n]
        renamed = sum(p.renamed for p in self.session.pairs)
        if renamed:
            parts.append(f"{renamed} renamed")
        if self.session.file_attributes:
            parts.append(plural(len(self.session.file_attributes), "file attribute change"))
        state = {"opening": "opening…", "running": "comparing…", "cancelled": "cancelled",
                 "failed": f"failed: {printable(self.session.message)}"}.get(self.session.state, "")
        if self.session.state == "done":
            same = not self.session.file_attributes and all(p.unchanged for p in self.session.pairs)
            state = "same content" if same else "differences found"
        self.summary.setText(f"{len(self.session.pairs)} entries: " + ", ".join(parts) + f" — <b>{state}</b>")

    # -- selection ---------------------------------------------------------------------------------------------
    def _row_changed(self, current, _previous) -> None:
        number = current.data(PAIR_ROLE) if current.isValid() else None
        if number is not None:
            self.session.select(number)

    def _restore_selection(self) -> None:
        selected = self.session.selected
        index = QModelIndex() if selected is None else self.model.index_of(selected)
        if index.isValid():
            self.tree_a.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)

    # -- groups open and close together on both sides ---------------------------------------------------------
    def _expanded(self, other: QTreeView, index: QModelIndex, expanded: bool) -> None:
        group = self.model.group(index)
        if group is not None and not self._restoring:
            (self._collapsed.discard if expanded else self._collapsed.add)(group.prefix)
        if other.isExpanded(index) != expanded:
            other.setExpanded(index, expanded)

    _restoring = False

    def _model_reset(self) -> None:
        """Groups rebuilt: open every group but those the user closed, then select the session's pair."""
        self._restoring = True
        try:
            pending = [QModelIndex()]
            while pending:
                parent = pending.pop()
                for row in range(self.model.rowCount(parent)):
                    index = self.model.index(row, 0, parent)
                    group = self.model.group(index)
                    if group is not None and group.prefix not in self._collapsed:
                        self.tree_a.setExpanded(index, True)
                        pending.append(index)
        finally:
            self._restoring = False
        self._restore_selection()

    def _sync_indicator(self, other: QTreeView, column: int, order: Qt.SortOrder) -> None:
        header: QHeaderView = other.header()
        if (header.sortIndicatorSection(), header.sortIndicatorOrder()) != (column, order):
            header.blockSignals(True)
            header.setSortIndicator(column, order)
            header.blockSignals(False)
            other.viewport().update()

    def select_name(self, name: str) -> bool:
        """Select the row of the pair named ``name`` (tests, scripts)."""
        for number, pair in enumerate(self.session.pairs):
            if pair.name == name or (pair.b is not None and pair.b.name == name):
                index = self.model.index_of(number)
                if not index.isValid():
                    return False
                self.tree_a.scrollTo(index)
                self.tree_a.setCurrentIndex(index)
                return True
        return False

    def shutdown(self) -> None:
        self.cancel()
        if self.task is not None:
            self.task.wait(3)
        self.pair_view.shutdown()
        self.model.detach()
        self.session.close()
