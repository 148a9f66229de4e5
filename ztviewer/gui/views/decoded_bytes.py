"""The Bytes tab's "Decoded" switch: a compressed part's decoded bytes in the hex view and the data inspector,
instead of its stored bytes. A ``zt.zstd-seekable/1`` part decodes only the frames on screen."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np
from PySide6.QtCore import QThreadPool, SignalInstance
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.errors import CodecError
from ztviewer.session.decoded_part import DecodedPart, why_not_decodable
from ztviewer.session.file_layout import FileLayout, Owners
from ztviewer.session.formatting import plural

from .hex_copy import HexActions
from .hex_find import HexFindBar

if TYPE_CHECKING:
    from .hex_view import HexView


class BytesHost(Protocol):
    """The file's view, whose hex view the Bytes page holds: its selection, and where decoded bytes are shown."""

    @property
    def hex_view(self) -> HexView: ...

    @property
    def tensor_file(self) -> TensorFile: ...

    @property
    def selection_changed(self) -> SignalInstance: ...

    @property
    def status_message(self) -> SignalInstance: ...

    def current_item(self) -> object: ...

    def current_tensor(self) -> Tensor | None: ...

    def select_item(self, tensor: Tensor | None, role: str | None = None, scroll_hex: bool = True) -> bool: ...

    def show_bytes_of(self, part: DecodedPart | None, layout: FileLayout | None) -> None: ...


def part_layout(part: DecodedPart) -> FileLayout:
    """One segment: the whole decoded stream, owned by the part (so the hex view tints it as that part)."""
    owners = Owners([part.tensor], [part.component.role], [])
    zero, size = np.zeros(1, np.int64), np.full(1, part.size, np.int64)
    return FileLayout(part.size, zero, size, np.zeros(1, np.int16), ["blob"], zero.copy(), owners)


class DecodedBytes(QWidget):
    """The Bytes page: a bar with the switch above the view's hex view. Follows the view's selection."""

    def __init__(self, view: BytesHost, pool: QThreadPool | None = None) -> None:
        super().__init__()
        self.setObjectName("bytesPage")
        self.view = view
        self.part: DecodedPart | None = None
        self.check = QCheckBox("Decoded")
        self.check.setObjectName("decodedBytes")
        self.check.setToolTip("Show the selected compressed part's decoded bytes instead of its stored bytes")
        self.check.toggled.connect(self._apply)
        self.info = QLabel()
        self.info.setObjectName("decodedInfo")
        self.info.setStyleSheet("color: palette(placeholder-text);")
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 0, 4, 0)
        bar.addWidget(self.check)
        bar.addWidget(self.info, 1)
        self.bar = QWidget()
        self.bar.setLayout(bar)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.bar)
        layout.addWidget(view.hex_view, 1)
        self.find_bar = HexFindBar(view.hex_view, pool)
        self.find_bar.message.connect(view.status_message)
        self.hex_actions = HexActions(view.hex_view, view.status_message.emit)
        layout.addWidget(self.find_bar)
        view.selection_changed.connect(self._follow)
        self.bar.hide()

    @property
    def showing_decoded(self) -> bool:
        return self.part is not None

    def _follow(self, item: object) -> None:
        """A new selection: offer the switch for a compressed part, and keep showing decoded bytes if on."""
        component = item if isinstance(item, Component) else None
        tensor = self.view.current_tensor() if component is not None else None
        if component is not None and tensor is not None and component.is_compressed:
            reason = why_not_decodable(tensor, component)
            self.bar.show()
            self.check.setEnabled(reason is None)
            self.check.setToolTip(reason or "Show this part's decoded bytes instead of its stored bytes")
            if self.part is not None and self.part.component is not component:
                self._show_stored()
            if self.check.isChecked() and reason is None and self.part is None:
                self._show_decoded(tensor, component)
            elif not self.check.isChecked() or reason is not None:
                self.info.setText(f"stored: {component.length:,} bytes ({component.encoding})"
                                  + (f" — {reason}" if reason else ""))
            return
        if self.part is not None:
            self._show_stored()
        self.bar.setVisible(False)

    def _apply(self, on: bool) -> None:
        component = self.view.current_item()
        tensor = self.view.current_tensor()
        if on and isinstance(component, Component) and tensor is not None and self.part is None:
            self._show_decoded(tensor, component)
        elif not on and self.part is not None:
            self._show_stored()
            self.view.select_item(tensor, component.role if isinstance(component, Component) else None)

    def _show_decoded(self, tensor: Tensor, component: Component) -> None:
        try:
            part = DecodedPart(self.view.tensor_file, tensor, component)
        except (CodecError, ValueError) as exc:
            self.info.setText(f"cannot decode: {exc}")
            self.check.blockSignals(True)
            self.check.setChecked(False)
            self.check.blockSignals(False)
            return
        self.part = part
        self.view.show_bytes_of(part, part_layout(part))
        frames = plural(part.frame_count, "frame")
        self.info.setText(f"decoded: {part.size:,} bytes ({frames}; stored {component.length:,} bytes)")

    def _show_stored(self) -> None:
        self.part = None
        self.view.show_bytes_of(None, None)
