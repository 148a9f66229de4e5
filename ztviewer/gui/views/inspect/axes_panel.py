"""Choose the two displayed axes of an N-D tensor, and an index (slider + spin box) for every other axis: the
widgets of a :class:`~ztviewer.session.dims.Dims`."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QSlider, QSpinBox, QWidget

from ztviewer.session.dims import AXES, INDEX, Dims

SLIDER_SETTLE_MS = 40


class AxisSelector(QWidget):
    """Renders a :class:`~ztviewer.session.dims.Dims` (napari's ``QtDims``): rows / columns axis choice plus one
    slider and spin box per sliced axis; the user's choices go to the dims, and the widgets follow the dims.

    ``changed`` is emitted (coalesced over :data:`SLIDER_SETTLE_MS` while a slider is dragged) whenever the
    displayed plane changes. The dims are the widget's own unless :meth:`bind` gives it a session's.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None, dims: Dims | None = None) -> None:
        super().__init__(parent)
        self.dims = dims if dims is not None else Dims()
        self.row_axis = QComboBox()
        self.row_axis.setObjectName("rowAxis")
        self.row_axis.setToolTip("Axis shown down the rows")
        self.col_axis = QComboBox()
        self.col_axis.setObjectName("colAxis")
        self.col_axis.setToolTip("Axis shown across the columns")
        self.sliders: dict[int, QSlider] = {}
        self.spins: dict[int, QSpinBox] = {}
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(2)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("rows"))
        top.addWidget(self.row_axis)
        top.addWidget(QLabel("columns"))
        top.addWidget(self.col_axis)
        top.addStretch(1)
        outer = QGridLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setVerticalSpacing(2)
        outer.addLayout(top, 0, 0)
        outer.addLayout(self._grid, 1, 0)
        self._emit_later = QTimer(self, singleShot=True, interval=SLIDER_SETTLE_MS)
        self._emit_later.timeout.connect(self.changed)
        self.row_axis.currentIndexChanged.connect(lambda axis: self._choose(self.dims.set_row_axis, axis))
        self.col_axis.currentIndexChanged.connect(lambda axis: self._choose(self.dims.set_col_axis, axis))
        self.dims.changed.connect(self._on_dims_changed)
        self._render_axes()

    def bind(self, dims: Dims) -> None:
        """Render (and change) ``dims`` from now on, e.g. the plane state of a file's session."""
        if dims is self.dims:
            return
        self.dims.changed.disconnect(self._on_dims_changed)
        self.dims = dims
        dims.changed.connect(self._on_dims_changed)
        self._render_axes()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.dims.shape

    def set_shape(self, shape: tuple[int, ...], axes: tuple[int, int] = (0, 1)) -> None:
        """A new tensor: axis choices for ``shape`` (hidden below 2-D), displayed ``axes`` selected."""
        self.dims.set_shape(shape, axes)

    def axes(self) -> tuple[int, int]:
        return self.dims.axes

    def fixed(self) -> dict[int, int]:
        return self.dims.fixed()

    def index_of(self, row: int, col: int) -> tuple[int, ...]:
        """The full tensor index of plane pixel ``(row, col)``."""
        return self.dims.index_of(row, col)

    def set_index(self, axis: int, value: int) -> None:
        """Move the slider of a fixed axis (emits ``changed`` at once)."""
        self.dims.set_index(axis, value)
        self._emit_later.stop()
        self.changed.emit()

    def set_axes(self, rows: int, cols: int) -> None:
        self.dims.set_axes(rows, cols)

    # -- internals -----------------------------------------------------------------------------------------
    def _choose(self, setter, axis: int) -> None:
        if axis >= 0:
            setter(axis)

    def _on_dims_changed(self, what: str) -> None:
        if what == INDEX:
            for axis, value in self.dims.fixed().items():
                spin = self.spins.get(axis)
                if spin is not None and spin.value() != value:
                    spin.blockSignals(True)
                    spin.setValue(value)
                    spin.blockSignals(False)
                    self.sliders[axis].setValue(value)
            self._emit_later.start()
            return
        self._render_axes()
        if what == AXES:
            self.changed.emit()

    def _render_axes(self) -> None:
        labels = [f"axis {k} ({d})" for k, d in enumerate(self.dims.shape)]
        for box, axis in zip((self.row_axis, self.col_axis), self.dims.axes):
            box.blockSignals(True)
            if [box.itemText(i) for i in range(box.count())] != labels:
                box.clear()
                box.addItems(labels)
            box.setCurrentIndex(axis if axis < len(labels) else 0)
            box.blockSignals(False)
        self.setVisible(self.dims.ndim >= 2)
        self._rebuild()

    def _rebuild(self) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.sliders.clear()
        self.spins.clear()
        fixed = self.dims.fixed()
        columns = 2 if len(fixed) >= 3 else 1  # many fixed axes: two columns of sliders
        for slot, (axis, value) in enumerate(fixed.items()):
            extent = self.dims.shape[axis]
            row, col = divmod(slot, columns)
            col *= 3
            label = QLabel(f"axis {axis}")
            slider = QSlider(Qt.Orientation.Horizontal)
            slider.setObjectName(f"axisSlider{axis}")
            slider.setRange(0, max(0, extent - 1))
            spin = QSpinBox()
            spin.setObjectName(f"axisSpin{axis}")
            spin.setRange(0, max(0, extent - 1))
            spin.setSuffix(f" / {extent - 1}")
            slider.setValue(value)
            spin.setValue(value)
            slider.valueChanged.connect(spin.setValue)
            spin.valueChanged.connect(slider.setValue)
            spin.valueChanged.connect(lambda v, a=axis: self.dims.set_index(a, v))
            self._grid.addWidget(label, row, col)
            self._grid.addWidget(slider, row, col + 1)
            self._grid.addWidget(spin, row, col + 2)
            self.sliders[axis], self.spins[axis] = slider, spin
        self._grid.setColumnStretch(1, 1)
        self._grid.setColumnStretch(4, 1 if columns == 2 else 0)
