"""Go to offset (Ctrl+G): decimal, 0x-hex or a trailing 'h', optionally relative (+/-) to the cursor."""
from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget


def parse_offset(text: str, size: int, cursor: int = 0) -> int:
    """Parse ``text`` into a byte offset inside a file of ``size`` bytes; raise ValueError with a message."""
    text = text.strip().replace("_", "").replace(",", "")
    if not text:
        raise ValueError("enter an offset")
    sign = text[0] if text[0] in "+-" else ""
    body = text[1:] if sign else text
    try:
        if body.lower().startswith("0x"):
            value = int(body[2:], 16)
        elif body.lower().endswith("h"):
            value = int(body[:-1], 16)
        else:
            value = int(body, 10)
    except ValueError:
        raise ValueError(f"{text!r} is not a number (use 1234, 0x4D2 or 4D2h)") from None
    offset = cursor + value if sign == "+" else cursor - value if sign == "-" else value
    if not 0 <= offset < max(size, 1):
        raise ValueError(f"offset {offset:,} is outside the file (0 … {max(0, size - 1):,})")
    return offset


class GoToOffsetDialog(QDialog):
    """Asks for an offset; ``offset`` holds the parsed value once accepted."""

    def __init__(self, size: int, cursor: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Go to Offset")
        self.file_size, self.cursor_offset, self.offset = size, cursor, cursor  # (size/cursor are QWidget's)
        self.edit = QLineEdit(f"0x{cursor:X}")
        self.edit.selectAll()
        self.error = QLabel(f"File size {size:,} bytes. Decimal, 0x… hex, or +/- relative to the cursor.")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Offset:"))
        layout.addWidget(self.edit)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def accept(self) -> None:
        try:
            self.offset = parse_offset(self.edit.text(), self.file_size, self.cursor_offset)
        except ValueError as exc:
            self.error.setText(str(exc))
            return
        super().accept()
