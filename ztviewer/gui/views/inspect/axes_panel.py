"""Choose the two displayed axes of an N-D tensor, and an index (slider + spin box) for every other axis."""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QGridLayout, QHBoxLayout, QLabel, QSlider, QSpinBox, QWidget

SLIDER_SETTLE_MS = 40


class AxisSelector(QWidget):
    """Rows / columns axis choice plus one slider and spin box per fixed axis.

    ``changed`` is emitted (coalesced over :data:`SLIDER_SETTLE_MS` while a slider is dragged) whenever the
    displayed plane changes. ``project`` adds a checkbox-like mode where unfixed axes are summed over (used by
    the sparse view); it is off here.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.shape: tuple[int, ...] = ()
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
        self.row_axis.currentIndexChanged.connect(lambda: self._axis_changed(self.row_axis, self.col_axis))
        self.col_axis.currentIndexChanged.connect(lambda: self._axis_changed(self.col_axis, self.row_axis))

    def set_shape(self, shape: tuple[int, ...], axes: tuple[int, int] = (0, 1)) -> None:
        """A new tensor: axis choices for ``shape`` (hidden below 2-D), displayed ``axes`` selected."""
        self.shape = tuple(int(d) for d in shape)
        labels = [f"axis {k} ({d})" for k, d in enumerate(self.shape)]
        for box, axis in ((self.row_axis, axes[0]), (self.col_axis, axes[1])):
            box.blockSignals(True)
            box.clear()
            box.addItems(labels)
            box.setCurrentIndex(axis if axis < len(labels) else 0)
            box.blockSignals(False)
        self.setVisible(len(self.shape) >= 2)
        self._rebuild()

    def axes(self) -> tuple[int, int]:
        if len(self.shape) < 2:
            return (0, 1)
        return self.row_axis.currentIndex(), self.col_axis.currentIndex()

    def fixed(self) -> dict[int, int]:
        return {axis: spin.value() for axis, spin in self.spins.items()}

    def index_of(self, row: int, col: int) -> tuple[int, ...]:
        """The full tensor index of plane pixel ``(row, col)``."""
        if len(self.shape) == 0:
            return ()
        if len(self.shape) == 1:
            return (col,)
        index = [0] * len(self.shape)
        r, c = self.axes()
        index[r], index[c] = row, col
        for axis, value in self.fixed().items():
            index[axis] = value
        return tuple(index)

    def set_index(self, axis: int, value: int) -> None:
        """Move the slider of a fixed axis (emits ``changed`` at once)."""
        self.spins[axis].setValue(value)
        self._emit_later.stop()
        self.changed.emit()

    def set_axes(self, rows: int, cols: int) -> None:
        for box, axis in ((self.row_axis, rows), (self.col_axis, cols)):
            box.blockSignals(True)
            box.setCurrentIndex(axis)
            box.blockSignals(False)
        self._rebuild()
        self.changed.emit()

    # -- internals -----------------------------------------------------------------------------------------
    def _axis_changed(self, moved: QComboBox, other: QComboBox) -> None:
        if moved.currentIndex() == other.currentIndex():  # picking the other's axis swaps the two
            other.blockSignals(True)
            other.setCurrentIndex(next(k for k in range(len(self.shape)) if k != moved.currentIndex())
                                  if self._previous.get(id(moved)) is None else self._previous[id(moved)])
            other.blockSignals(False)
        self._rebuild()
        self.changed.emit()

    def _rebuild(self) -> None:
        old = self.fixed()
        while self._grid.count():
            widget = self._grid.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        self.sliders.clear()
        self.spins.clear()
        displayed = set(self.axes()) if len(self.shape) >= 2 else set(range(len(self.shape)))
        fixed_axes = [axis for axis in range(len(self.shape)) if axis not in displayed]
        columns = 2 if len(fixed_axes) >= 3 else 1  # many fixed axes: two columns of sliders
        for slot, axis in enumerate(fixed_axes):
            extent = self.shape[axis]
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
            value = min(old.get(axis, 0), max(0, extent - 1))
            slider.setValue(value)
            spin.setValue(value)
            slider.valueChanged.connect(spin.setValue)
            spin.valueChanged.connect(slider.setValue)
            spin.valueChanged.connect(lambda *_: self._emit_later.start())
            self._grid.addWidget(label, row, col)
            self._grid.addWidget(slider, row, col + 1)
            self._grid.addWidget(spin, row, col + 2)
            self.sliders[axis], self.spins[axis] = slider, spin
        self._grid.setColumnStretch(1, 1)
        self._grid.setColumnStretch(4, 1 if columns == 2 else 0)
        self._previous = {id(box): box.currentIndex() for box in (self.row_axis, self.col_axis)}

    _previous: dict = {}
