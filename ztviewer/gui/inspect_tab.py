"""Hooks the Inspect area into a :class:`~ztviewer.gui.file_view.FileView`: a "Bytes | Inspect" tab pair on
the right of the tensor tree, fed by the tree's current item."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QBoxLayout, QSplitter, QTabWidget, QVBoxLayout, QWidget

from ztviewer.codec import Problem, Tensor
from ztviewer.session.selection import Item, Selection

if TYPE_CHECKING:
    from ztviewer.session.file_session import FileSession

    from .views.inspect import InspectPanel

INSPECT_SHARE = 0.6  # the right side gets at least this share of the width when Inspect is chosen


class InspectHost(Protocol):
    """What the Inspect area needs of the view it is added to (a :class:`~ztviewer.gui.file_view.FileView`)."""

    @property
    def session(self) -> FileSession: ...

    @property
    def status_message(self) -> SignalInstance: ...

    @property
    def splitter(self) -> QSplitter: ...     # between the tree and the Bytes | Inspect tabs (made after them)

    def select_item(self, tensor: Tensor | None, role: str | None = None, scroll_hex: bool = True) -> bool: ...

    def report_problems(self, problems: list[Problem]) -> None: ...


class LazyInspectPage(QWidget):
    """The Inspect tab's page. The real :class:`InspectPanel` (a dozen pyqtgraph plots) is built the first
    time it is needed (and so is pyqtgraph imported), so opening a file costs nothing for views nobody looked
    at. Attribute access is forwarded to the panel (building it)."""

    def __init__(self, view: InspectHost) -> None:
        super().__init__()
        self._view = view
        self._panel: InspectPanel | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)

    @property
    def panel(self) -> InspectPanel:
        if self._panel is None:
            from .views.inspect import InspectPanel

            panel = self._panel = InspectPanel()
            self._layout.addWidget(panel)
            panel.set_session(self._view.session)
            panel.tensor_activated.connect(lambda tensor: self._view.select_item(tensor, scroll_hex=False))
            panel.message.connect(self._view.status_message)
            panel.problem_found.connect(lambda problem: self._view.report_problems([problem]))
        return self._panel

    def shutdown(self) -> None:
        if self._panel is not None:
            self._panel.shutdown()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.panel, name)


def add_inspect_tab(view: InspectHost, layout: QBoxLayout, bytes_widget: QWidget) -> tuple[LazyInspectPage, QTabWidget]:
    """Put ``bytes_widget`` (the hex view) and a (lazily built) :class:`InspectPanel` in tabs added to ``layout``;
    returns the page and the tabs.

    The panel follows the selection of ``view.session`` (lazily: only while its tab is in front); double-clicking
    a tensor in the file statistics selects it in the tree; the panel's messages go to ``view.status_message``.
    Call ``page.shutdown()`` when the view closes.
    """
    page = LazyInspectPage(view)
    tabs = QTabWidget()
    tabs.setObjectName("bytesInspectTabs")
    tabs.setDocumentMode(True)
    tabs.addTab(bytes_widget, "Bytes")
    tabs.addTab(page, "Inspect")
    layout.addWidget(tabs, 1)

    pending: list[tuple[Item, Tensor | None]] = []

    def follow(selection: Selection) -> None:
        pending[:] = [(selection.item, selection.tensor)]
        if tabs.currentWidget() is page:  # nothing is read or computed while the hex view is in front
            page.panel.show_item(*pending.pop())

    def widen(index: int) -> None:
        if tabs.widget(index) is page and pending:
            page.panel.show_item(*pending.pop())
        if tabs.widget(index) is not page:
            return
        splitter = view.splitter
        sizes = splitter.sizes()
        total = sum(sizes)
        if total and sizes[-1] < INSPECT_SHARE * total:
            right = int(INSPECT_SHARE * total)
            splitter.setSizes([total - right, right])

    view.session.selection_changed.connect(follow)
    tabs.currentChanged.connect(widen)
    return page, tabs
