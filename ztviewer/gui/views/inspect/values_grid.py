"""The values grid: the shown plane (or a sparse tensor's entries) as a lazy spreadsheet.

:class:`ValuesModel` asks its :class:`~ztviewer.session.value_grid.CellSource` for blocks of the cells on screen
(kept in a small LRU), so millions of rows scroll as fast as a few. :class:`ValuesView` adds index headers, Go to
Index (Ctrl+J), Copy as TSV (Ctrl+C) and Copy as NumPy (Ctrl+Shift+C).
"""
from __future__ import annotations

import re
from collections import OrderedDict

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QFontDatabase, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec.errors import CodecError
from ztviewer.session.value_grid import CellSource, CopyTooLarge, numpy_literal, tsv

BLOCK_ROWS, BLOCK_COLS = 64, 32
CACHED_BLOCKS = 96
#: QAbstractItemModel counts rows in a C int; larger planes show their first rows and say so.
MAX_ROWS = (1 << 31) - 1
ALIGN_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()


class ValuesModel(QAbstractTableModel):
    """Read-only table over a cell source; text is fetched a block at a time. A block that cannot be read (the
    file changed on disk) shows empty cells; ``failed(str)`` says why, once per source."""

    failed = Signal(str)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.source: CellSource | None = None
        self.error: str | None = None
        self._blocks: OrderedDict[tuple[int, int], list[list[str]]] = OrderedDict()

    def set_source(self, source: CellSource | None) -> None:
        self.beginResetModel()
        self.source = source
        self.error = None
        self._blocks.clear()
        self.endResetModel()

    @property
    def truncated(self) -> bool:
        return self.source is not None and self.source.rows > MAX_ROWS

    def rowCount(self, parent: Index = _ROOT) -> int:
        if parent.isValid() or self.source is None:
            return 0
        return min(self.source.rows, MAX_ROWS)

    def columnCount(self, parent: Index = _ROOT) -> int:
        if parent.isValid() or self.source is None:
            return 0
        return min(self.source.cols, MAX_ROWS)

    def _block(self, brow: int, bcol: int) -> list[list[str]]:
        key = (brow, bcol)
        block = self._blocks.get(key)
        if block is None:
            source = self.source
            if source is None:   # no plane: the model has no rows to ask for
                return []
            r0, c0 = brow * BLOCK_ROWS, bcol * BLOCK_COLS
            r1, c1 = min(source.rows, r0 + BLOCK_ROWS), min(source.cols, c0 + BLOCK_COLS)
            try:
                block = source.texts(r0, r1, c0, c1)
            except CodecError as exc:   # never raise while painting: empty cells, and say why once
                if self.error is None:
                    self.error = str(exc)
                    self.failed.emit(f"Values not shown: {exc}")
                return [[""] * (c1 - c0) for _ in range(r1 - r0)]
            self._blocks[key] = block
            if len(self._blocks) > CACHED_BLOCKS:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(key)
        return block

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.source is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            row, col = index.row(), index.column()
            block = self._block(row // BLOCK_ROWS, col // BLOCK_COLS)
            return block[row % BLOCK_ROWS][col % BLOCK_COLS]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(ALIGN_RIGHT.value)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if self.source is None or role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self.source.col_label(section)
        return self.source.row_label(section)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


def parse_index(text: str) -> tuple[int, int] | None:
    """``"12, 40"``, ``"12 40"``, ``"(12, 40)"`` or ``"12"`` (row only) → (row, col); None if not numbers."""
    numbers = re.findall(r"-?\d[\d_]*", text)
    if not numbers or len(numbers) > 2 or re.sub(r"[-\d_,;\s()\[\]]", "", text):
        return None
    values = [int(n.replace("_", "")) for n in numbers]
    return values[0], values[1] if len(values) > 1 else 0


class ValuesView(QWidget):
    """The grid plus a caption; ``message(str)`` for the status bar."""

    message = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("valuesView")
        self.model = ValuesModel(self)
        self.model.failed.connect(self.message)
        self.table = QTableView()
        self.table.setObjectName("valuesTable")
        self.table.setModel(self.model)
        self.table.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        row_height = self.table.fontMetrics().height() + 6
        for header in (self.table.verticalHeader(), self.table.horizontalHeader()):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)   # uniform sections: no per-row measuring
            header.setHighlightSections(True)
        self.table.verticalHeader().setDefaultSectionSize(row_height)
        widest = self.table.fontMetrics().horizontalAdvance("-0.0000000e+00")
        self.table.horizontalHeader().setDefaultSectionSize(widest + 12)
        self.table.horizontalHeader().setDefaultAlignment(ALIGN_RIGHT)
        self.table.verticalHeader().setDefaultAlignment(ALIGN_RIGHT)
        self.caption = QLabel()
        self.caption.setObjectName("valuesCaption")
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.position = QLabel()
        self.position.setObjectName("valuesPosition")

        self.goto_action = self._action("&Go to Index…", "Ctrl+J", self.ask_goto,
                                        "Scroll to a row and column of the grid (Ctrl+J)")
        self.copy_action = self._action("&Copy as TSV", QKeySequence.StandardKey.Copy, self.copy_tsv,
                                        "Copy the selected cells as tab-separated text (Ctrl+C)")
        self.copy_numpy_action = self._action("Copy as &NumPy", "Ctrl+Shift+C", self.copy_numpy,
                                              "Copy the selected cells as an np.array(...) literal (Ctrl+Shift+C)")
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(2, 0, 2, 0)
        buttons.addWidget(self.caption, 1)
        buttons.addWidget(self.position)
        for action in (self.goto_action, self.copy_action, self.copy_numpy_action):
            self.table.addAction(action)
            button = QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 1)
        self.table.selectionModel().currentChanged.connect(self._current_changed)

    def _action(self, text: str, keys, slot, tip: str) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(keys))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    # -- content ---------------------------------------------------------------------------------------------
    def set_source(self, source: CellSource | None, caption: str = "") -> None:
        current = self.table.currentIndex()
        keep = (current.row(), current.column()) if current.isValid() else None
        self.model.set_source(source)
        if source is not None and self.model.truncated:
            caption += f"  ·  showing the first {self.model.rowCount():,} of {source.rows:,} rows"
        self.caption.setText(caption)
        if source is not None and keep is not None:
            self.go_to(min(keep[0], source.rows - 1), min(keep[1], source.cols - 1), select=False)
        self._current_changed()

    @property
    def source(self) -> CellSource | None:
        return self.model.source

    # -- navigation ------------------------------------------------------------------------------------------
    def go_to(self, row: int, col: int, select: bool = True) -> bool:
        """Make cell (row, col) current and scroll to it (negative numbers count from the end)."""
        rows, cols = self.model.rowCount(), self.model.columnCount()
        if not rows or not cols:
            return False
        row, col = (row + rows if row < 0 else row), (col + cols if col < 0 else col)
        if not (0 <= row < rows and 0 <= col < cols):
            self.message.emit(f"Index ({row}, {col}) is outside the grid of {rows:,} × {cols:,}")
            return False
        index = self.model.index(row, col)
        self.table.setCurrentIndex(index)
        if not select:
            self.table.clearSelection()
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def ask_goto(self) -> None:
        if self.source is None:
            return
        current = self.table.currentIndex()
        start = f"{current.row()}, {current.column()}" if current.isValid() else "0, 0"
        text, ok = QInputDialog.getText(self, "Go to Index", f"Row, column (grid of {self.model.rowCount():,} × "
                                        f"{self.model.columnCount():,}; negative counts from the end):",
                                        text=start)
        if not ok:
            return
        parsed = parse_index(text)
        if parsed is None:
            self.message.emit(f"Go to index: {text!r} is not 'row, column'")
            return
        self.go_to(*parsed)

    def _current_changed(self, *args) -> None:
        current = self.table.currentIndex()
        source = self.source
        if source is None or not current.isValid():
            self.position.setText("")
            return
        index_of = getattr(source, "index_of", None)
        where = index_of(current.row(), current.column()) if index_of is not None else (current.row(), current.column())
        self.position.setText(f"[{', '.join(str(i) for i in where)}]")

    # -- copying ---------------------------------------------------------------------------------------------
    def selected_rect(self) -> tuple[int, int, int, int] | None:
        """(r0, r1, c0, c1) of the selection (contiguous), else the current cell."""
        ranges = self.table.selectionModel().selection().toList()   # the selection as a list of ranges
        if ranges:
            r = ranges[0]
            return r.top(), r.bottom() + 1, r.left(), r.right() + 1
        current = self.table.currentIndex()
        if current.isValid():
            return current.row(), current.row() + 1, current.column(), current.column() + 1
        return None

    def _copy(self, make, what: str) -> str | None:
        rect = self.selected_rect()
        if self.source is None or rect is None:
            return None
        try:
            text = make(self.source, *rect)
        except (CopyTooLarge, CodecError) as exc:
            self.message.emit(f"Not copied: {exc}")
            return None
        QGuiApplication.clipboard().setText(text)
        r0, r1, c0, c1 = rect
        self.message.emit(f"Copied {r1 - r0:,} × {c1 - c0:,} cells as {what}")
        return text

    def copy_tsv(self) -> str | None:
        return self._copy(tsv, "TSV")

    def copy_numpy(self) -> str | None:
        return self._copy(numpy_literal, "a NumPy literal")
