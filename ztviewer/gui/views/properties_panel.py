"""The properties dock: every manifest field, attribute and derived fact of the selection."""
from __future__ import annotations

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from ztviewer.session.properties import Prop

_EXPANDED = {"File", "Group", "Manifest", "Component", "Derived", "Problems", "Attributes", "zTensor v2"}
_EXPANDED_CHILDREN = {("zTensor v2", "generations")}


class PropertiesPanel(QTreeWidget):
    """A two-column tree of :class:`~ztviewer.session.properties.Prop` rows; Ctrl+C copies the selected values."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("propertiesPanel")
        self.setColumnCount(2)
        self.setHeaderLabels(["Property", "Value"])
        self.setAlternatingRowColors(True)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.header().setStretchLastSection(True)
        self.setColumnWidth(0, 170)

    def show_props(self, props: list[Prop]) -> None:
        self.setUpdatesEnabled(False)
        self.clear()
        for prop in props:
            self._add(None, prop)
        self.setUpdatesEnabled(True)

    def _add(self, parent: QTreeWidgetItem | None, prop: Prop) -> None:
        item = QTreeWidgetItem([prop.key, prop.value])
        item.setToolTip(1, prop.value)
        if parent is None:
            self.addTopLevelItem(item)
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
        else:
            parent.addChild(item)
        for child in prop.children:
            self._add(item, child)
        if (prop.key in _EXPANDED if parent is None else (parent.text(0), prop.key) in _EXPANDED_CHILDREN):
            item.setExpanded(True)

    def value_of(self, *path: str) -> str | None:
        """Value at a key path (``value_of("Derived", "alignment")``), for tests and scripting."""
        items = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        item = None
        for key in path:
            item = next((i for i in items if i is not None and i.text(0) == key), None)
            if item is None:
                return None
            items = [item.child(i) for i in range(item.childCount())]
        return item.text(1) if item is not None else None

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            text = "\n".join(f"{i.text(0)}\t{i.text(1)}" for i in self.selectedItems())
            QGuiApplication.clipboard().setText(text)
        else:
            super().keyPressEvent(event)
