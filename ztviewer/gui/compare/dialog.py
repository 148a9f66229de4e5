"""File ▸ Compare…: choose A (the reference) and B — files, or folders / index files of tensor sets."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class CompareDialog(QDialog):
    """Two paths; ``paths()`` once accepted. ``filters`` are the Open dialog's name filters."""

    def __init__(self, filters: list[str], a: str = "", b: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareDialog")
        self.setWindowTitle("Compare Two Files")
        self.filters = filters
        self.edits: dict[str, QLineEdit] = {}
        grid = QGridLayout()
        for row, (side, value, what) in enumerate((("A", a, "reference"), ("B", b, "compared with A"))):
            edit = QLineEdit(value)
            edit.setObjectName(f"comparePath{side}")
            edit.setMinimumWidth(420)
            edit.setPlaceholderText(f"{side}: file, folder or index of a tensor set ({what})")
            edit.textChanged.connect(self._update_ok)
            file_button = QPushButton("File…")
            file_button.clicked.connect(lambda _=False, e=edit: self._browse_file(e))
            folder_button = QPushButton("Folder…")
            folder_button.setToolTip("A sharded checkpoint or dataset folder")
            folder_button.clicked.connect(lambda _=False, e=edit: self._browse_folder(e))
            grid.addWidget(QLabel(f"<b>{side}</b>"), row, 0)
            grid.addWidget(edit, row, 1)
            grid.addWidget(file_button, row, 2)
            grid.addWidget(folder_button, row, 3)
            self.edits[side] = edit
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Compare")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Any formats and generations: tensors are paired by name (renames by content), "
                                "then compared value by value."))
        layout.addLayout(grid)
        layout.addWidget(self.buttons)
        self._update_ok()

    def paths(self) -> tuple[str, str]:
        return self.edits["A"].text().strip(), self.edits["B"].text().strip()

    def _update_ok(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(all(self.paths()))

    def _browse_file(self, edit: QLineEdit) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a File", edit.text(), ";;".join(self.filters))
        if path:
            edit.setText(path)

    def _browse_folder(self, edit: QLineEdit) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose a Folder", edit.text())
        if path:
            edit.setText(path)
