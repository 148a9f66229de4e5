"""The problems dock: a sortable table of the current file's problems; activating one navigates to it."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ztviewer.session.formatting import plural

from ..models.problems_model import (
    PROBLEM_ROLE,
    SORT_ROLE,
    ProblemColumn,
    ProblemsModel,
)


class ProblemsPanel(QWidget):
    problem_activated = Signal(object)   # codec Problem

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("problemsPanel")
        self.summary = QLabel("No file")
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.clicked.connect(self._activate)
        self.table.activated.connect(self._activate)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.table)
        self._model: ProblemsModel | None = None

    def set_model(self, model: ProblemsModel | None) -> None:
        if self._model is not None:
            for signal in (self._model.modelReset, self._model.rowsInserted, self._model.rowsRemoved,
                           self._model.note_changed):
                signal.disconnect(self._update_summary)
        self._model = model
        self.proxy.setSourceModel(model)  # type: ignore[arg-type]  # None clears the source model
        self._size_columns()
        if model is not None:
            for signal in (model.modelReset, model.rowsInserted, model.rowsRemoved, model.note_changed):
                signal.connect(self._update_summary)
        self._update_summary()

    def _size_columns(self) -> None:
        """Fixed columns in average characters of the table's font (so they scale with it); Message takes the rest."""
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        char = self.table.fontMetrics().averageCharWidth()
        icon = self.table.style().pixelMetric(self.table.style().PixelMetric.PM_SmallIconSize)
        for column, chars in ((ProblemColumn.SEVERITY, 8), (ProblemColumn.WHERE, 18), (ProblemColumn.OFFSET, 8),
                              (ProblemColumn.RULE, 20)):
            if column < header.count():
                extra = icon + 8 if column == ProblemColumn.SEVERITY else 8
                self.table.setColumnWidth(column, max(header.sectionSizeHint(column), chars * char + extra))
        if header.count() > ProblemColumn.MESSAGE:
            header.setSectionResizeMode(ProblemColumn.MESSAGE, QHeaderView.ResizeMode.Stretch)

    def model(self) -> ProblemsModel | None:
        return self._model

    def _update_summary(self, *args) -> None:
        if self._model is None:
            self.summary.setText("No file")
            return
        errors, warnings = self._model.counts()
        text = "No problems found" if not errors and not warnings else \
            f"{plural(errors, 'error')}, {plural(warnings, 'warning')}"
        self.summary.setText(f"{text} · {self._model.note}" if self._model.note else text)
        self.summary.setToolTip(self._model.note)

    def _activate(self, index: QModelIndex) -> None:
        problem = self.proxy.data(index, PROBLEM_ROLE)
        if problem is not None:
            self.problem_activated.emit(problem)

    def activate_row(self, row: int) -> None:
        """Activate the problem shown at ``row`` (as a click would)."""
        self._activate(self.proxy.index(row, 0))
