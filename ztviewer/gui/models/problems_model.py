"""Table model of a file's problems: those the reader found, plus those verification adds."""
from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import QApplication, QStyle

from ztviewer.codec import Problem

from .. import theme

AnyIndex = QModelIndex | QPersistentModelIndex


class ProblemColumn(IntEnum):
    SEVERITY = 0
    WHERE = 1
    OFFSET = 2
    MESSAGE = 3
    RULE = 4


HEADERS = ("Severity", "Where", "Offset", "Message", "Rule")
PROBLEM_ROLE = Qt.ItemDataRole.UserRole + 1   # the codec Problem of the row
SORT_ROLE = Qt.ItemDataRole.UserRole + 2


def where_text(problem: Problem) -> str:
    parts = [p for p in (problem.tensor, problem.component) if p is not None]
    return " · ".join(parts) if parts else "file"


class ProblemsModel(QAbstractTableModel):
    note_changed = Signal(str)

    def __init__(self, problems: Iterable[Problem] = (), parent=None) -> None:
        super().__init__(parent)
        self._problems: list[Problem] = list(problems)
        self._known: set[Problem] = set(self._problems)
        self.note = ""      # how the file's last Check File / verification ended

    def set_note(self, text: str) -> None:
        self.note = text
        self.note_changed.emit(text)

    def problems(self) -> list[Problem]:
        return list(self._problems)

    def problem(self, row: int) -> Problem:
        return self._problems[row]

    def counts(self) -> tuple[int, int]:
        errors = sum(1 for p in self._problems if p.is_error)
        return errors, len(self._problems) - errors

    def set_problems(self, problems: Iterable[Problem]) -> None:
        self.beginResetModel()
        self._problems = list(problems)
        self._known = set(self._problems)
        self.endResetModel()

    def add_problems(self, problems: Iterable[Problem]) -> list[Problem]:
        """Append the problems not listed yet (the same problem found twice is listed once); returns those."""
        new = list(dict.fromkeys(p for p in problems if p not in self._known))
        if new:
            self.beginInsertRows(QModelIndex(), len(self._problems), len(self._problems) + len(new) - 1)
            self._problems.extend(new)
            self._known.update(new)
            self.endInsertRows()
        return new

    def remove_where(self, predicate) -> None:
        """Drop the problems a predicate selects (e.g. stale mismatches before re-verifying)."""
        keep = [p for p in self._problems if not predicate(p)]
        if len(keep) != len(self._problems):
            self.set_problems(keep)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._problems)

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(ProblemColumn)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(HEADERS):
            return HEADERS[section]
        return None

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        problem = self._problems[index.row()]
        column = index.column()
        if role == PROBLEM_ROLE:
            return problem
        if role in (Qt.ItemDataRole.DisplayRole, SORT_ROLE):
            if column == ProblemColumn.SEVERITY:
                return problem.severity.value
            if column == ProblemColumn.WHERE:
                return where_text(problem)
            if column == ProblemColumn.OFFSET:
                if problem.offset is None:
                    return "" if role == Qt.ItemDataRole.DisplayRole else -1
                return f"0x{problem.offset:X}" if role == Qt.ItemDataRole.DisplayRole else problem.offset
            if column == ProblemColumn.MESSAGE:
                return problem.message
            return problem.rule
        if role == Qt.ItemDataRole.ToolTipRole:
            return str(problem)
        if role == Qt.ItemDataRole.DecorationRole and column == ProblemColumn.SEVERITY:
            pixmap = QStyle.StandardPixmap
            icon = pixmap.SP_MessageBoxCritical if problem.is_error else pixmap.SP_MessageBoxWarning
            return QApplication.style().standardIcon(icon)
        if role == Qt.ItemDataRole.ForegroundRole and column == ProblemColumn.SEVERITY:
            return theme.error_color() if problem.is_error else theme.warning_color()
        return None
