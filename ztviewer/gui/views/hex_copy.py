"""Hex view actions: copy the selected bytes as hex / C array / Python bytes (capped, see
:mod:`ztviewer.session.byte_copy`) and Select Range… (start and length or end, decimal or 0x-hex)."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QInputDialog

from ztviewer.codec.errors import CodecError, SourceChanged
from ztviewer.session.byte_copy import TITLES, CopyTooLarge, check_size, render

from .hex_view import HexView


def parse_range(text: str, size: int) -> tuple[int, int]:
    """``"0x100 +64"`` (start, length), ``"0x100-0x13F"`` / ``"256..319"`` (inclusive end) → (offset, length)."""
    cleaned = text.replace(",", " ").replace("_", "").strip()
    try:
        if "+" in cleaned:
            start_text, length_text = cleaned.split("+", 1)
            start, length = int(start_text.strip(), 0), int(length_text.strip(), 0)
        else:
            parts = cleaned.replace("..", " ").replace("-", " ").split()
            if len(parts) != 2:
                raise ValueError
            start, end = int(parts[0], 0), int(parts[1], 0)
            length = end - start + 1
    except ValueError:
        raise ValueError(f"{text!r}: write 'start +length' or 'start-end' (e.g. 0x100 +64, 256-319)") from None
    if start < 0 or length <= 0 or start + length > size:
        raise ValueError(f"bytes {start:,} … {start + length - 1:,} are not inside the {size:,} bytes shown")
    return start, length


class HexActions:
    """Copy and select-range actions on a hex view (its context menu and shortcuts)."""

    def __init__(self, hex_view: HexView, report: Callable[[str], None]) -> None:
        self.hex_view = hex_view
        self.report = report
        self.copy_actions: dict[str, QAction] = {}
        for kind, keys in (("hex", QKeySequence.StandardKey.Copy), ("c", None), ("python", None)):
            action = QAction(f"Copy as {TITLES[kind]}", hex_view)
            if keys is not None:
                action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(lambda _=False, k=kind: self.copy(k))
            hex_view.addAction(action)
            self.copy_actions[kind] = action
        self.select_range_action = QAction("Select &Range…", hex_view)
        self.select_range_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.select_range_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.select_range_action.triggered.connect(self.ask_range)
        hex_view.addAction(self.select_range_action)
        hex_view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

    def selected_bytes(self) -> bytes | None:
        """The selection's bytes (the cursor byte when nothing is selected); refuses past the copy cap."""
        view = self.hex_view
        source = view.source
        if source is None or not view.size_bytes:
            return None
        offset, length = view.selection() or (view.cursor_offset(), 1)
        length = min(length, view.size_bytes - offset)
        check_size(length)
        data = source.window(offset, length)
        if len(data) < length:   # the file is shorter than when it was opened: copy nothing rather than a part
            raise SourceChanged(f"{source.path} ends before byte {offset + length:,} of the selection; it changed on "
                                "disk since it was opened: reload it", offset=offset + len(data),
                                rule="an open file must not change under the reader")
        return data

    def copy(self, kind: str) -> str | None:
        try:
            data = self.selected_bytes()
        except (CopyTooLarge, CodecError) as exc:
            self.report(f"Not copied: {exc}")
            return None
        if data is None:
            return None
        text = render(kind, data)
        QGuiApplication.clipboard().setText(text)
        self.report(f"Copied {len(data):,} bytes as {TITLES[kind]}")
        return text

    def ask_range(self) -> None:
        view = self.hex_view
        if view.source is None:
            return
        offset, length = view.selection() or (view.cursor_offset(), 1)
        text, ok = QInputDialog.getText(view, "Select Range",
                                        "Start +length, or start-end (inclusive); decimal or 0x hex:",
                                        text=f"0x{offset:X} +{length}")
        if ok:
            self.select_text(text)

    def select_text(self, text: str) -> bool:
        try:
            offset, length = parse_range(text, self.hex_view.size_bytes)
        except ValueError as exc:
            self.report(f"Select range: {exc}")
            return False
        self.hex_view.set_selection(offset, length)
        self.report(f"Selected {length:,} bytes at 0x{offset:X}")
        return True
