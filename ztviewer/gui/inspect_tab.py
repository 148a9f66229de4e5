"""Hooks the Inspect area into a :class:`~ztviewer.gui.file_view.FileView`: a "Bytes | Inspect" tab pair on
the right of the tensor tree, fed by the tree's current item."""
from __future__ import annotations

from PySide6.QtWidgets import QBoxLayout, QTabWidget, QWidget

from ztviewer.codec.model import Tensor

from .views.inspect import InspectPanel

INSPECT_SHARE = 0.6  # the right side gets at least this share of the width when Inspect is chosen


def add_inspect_tab(view, layout: QBoxLayout, bytes_widget: QWidget) -> InspectPanel:
    """Put ``bytes_widget`` (the hex view) and a new :class:`InspectPanel` in tabs added to ``layout``.

    The panel follows ``view.selection_changed`` (lazily: only while its tab is in front); double-clicking a
    tensor in the file statistics selects it
    in the tree; the panel's messages go to ``view.status_message``. Call ``panel.shutdown()`` when the view
    closes.
    """
    panel = InspectPanel()
    tabs = QTabWidget()
    tabs.setObjectName("bytesInspectTabs")
    tabs.setDocumentMode(True)
    tabs.addTab(bytes_widget, "Bytes")
    tabs.addTab(panel, "Inspect")
    layout.addWidget(tabs, 1)
    panel.set_file(view.tensor_file)
    view.inspect_tabs = tabs

    pending: list = []

    def follow(item) -> None:
        tensor = None
        tree = getattr(view, "tree", None)
        if tree is not None and not isinstance(item, Tensor):
            tensor = view.tree_model.tensor_of(view.proxy.mapToSource(tree.currentIndex()))
        pending[:] = [(item, tensor)]
        if tabs.currentWidget() is panel:  # nothing is read or computed while the hex view is in front
            panel.show_item(*pending.pop())

    def widen(index: int) -> None:
        if tabs.widget(index) is panel and pending:
            panel.show_item(*pending.pop())
        splitter = getattr(view, "splitter", None)
        if tabs.widget(index) is not panel or splitter is None:
            return
        sizes = splitter.sizes()
        total = sum(sizes)
        if total and sizes[-1] < INSPECT_SHARE * total:
            right = int(INSPECT_SHARE * total)
            splitter.setSizes([total - right, right])

    view.selection_changed.connect(follow)
    tabs.currentChanged.connect(widen)
    panel.tensor_activated.connect(lambda tensor: view.select_item(tensor, scroll_hex=False))
    panel.message.connect(view.status_message)
    return panel
