"""View ▸ Generations…: the append generations of a zTensor v2 file, each of which can be opened read-only."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec import TensorFile
from ztviewer.session.formatting import hex_offset, human_bytes
from ztviewer.session.zt_v2_facts import (
    GenerationRow,
    generation_rows,
    is_generation_view,
)

HEADERS = ("Generation", "State", "Objects", "File size", "Manifest", "Footer at")


class GenerationsDialog(QDialog):
    """Lists every generation, newest first; ``open_requested`` carries the chosen :class:`GenerationRow`."""

    open_requested = Signal(object)

    def __init__(self, tf: TensorFile, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("generationsDialog")
        self.setWindowTitle("Generations")
        self.rows = generation_rows(tf)
        earlier_only = is_generation_view(tf)
        intro = QLabel(
            "Each save that appends to a zTensor v2 file adds a generation: a new manifest and footer after the "
            "old ones, which stay in the file. The footer at the end of the file wins; an earlier generation can "
            "be opened read-only to see the file as it was." if not earlier_only else
            "This tab shows an earlier generation; the ones listed are those before it.")
        stopped = tf.extra.get("generations_search")
        if stopped:
            intro.setText(f"{intro.text()} Not every generation was found: {stopped}.")
        intro.setWordWrap(True)
        self.table = QTreeWidget()
        self.table.setObjectName("generationsTable")
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setHeaderLabels(list(HEADERS))
        for row in self.rows:
            self.table.addTopLevelItem(self._item(row, earlier_only))
        for column in range(len(HEADERS)):
            self.table.resizeColumnToContents(column)
        self.table.itemDoubleClicked.connect(lambda item, column: self._open())
        self.table.currentItemChanged.connect(lambda current, previous: self._update_button())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = QPushButton("&Open This Generation")
        self.open_button.setToolTip("Open the file as it was in the selected generation, in a read-only tab")
        buttons.addButton(self.open_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.clicked.connect(self._open)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(720, 320)
        if len(self.rows) > 1:
            self.table.setCurrentItem(self.table.topLevelItem(1))  # type: ignore[arg-type]  # row 1 exists (> 1 rows)
        self._update_button()

    @staticmethod
    def _item(row: GenerationRow, earlier_only: bool) -> QTreeWidgetItem:
        state = ("shown" if earlier_only else "current") if row.current else "superseded"
        objects = "?" if row.objects is None else f"{row.objects:,}"
        item = QTreeWidgetItem([str(row.number), state, objects, human_bytes(row.size),
                                f"{row.manifest_length:,} bytes at {hex_offset(row.manifest_offset)}",
                                hex_offset(row.footer_offset)])
        item.setData(0, Qt.ItemDataRole.UserRole, row)
        item.setToolTip(3, f"{row.size:,} bytes")
        for column in (0, 2, 3):
            item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return item

    def selected(self) -> GenerationRow | None:
        item = self.table.currentItem()
        return item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None

    def _update_button(self) -> None:
        row = self.selected()
        self.open_button.setEnabled(row is not None and not row.current)

    def _open(self) -> None:
        row = self.selected()
        if row is not None and not row.current:
            self.open_requested.emit(row)
            self.accept()
