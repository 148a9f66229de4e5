"""The control bar of image views: colour map, levels (auto / percentile / manual), log scale, reduction,
complex part and how stored bits are read. Pure widgets: the view reads the state and reacts to ``changed``."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QDoubleValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLabel, QLineEdit, QSizePolicy, QToolButton, QWidget

from ztviewer.analysis.plane_jobs import METHOD_HELP, METHODS
from ztviewer.analysis.slicing import COMPLEX_MODES

from .flow_layout import FlowLayout, group
from .levels import COLORMAPS, DEFAULT_PERCENT, LEVEL_MODES


def combo(items, tooltip: str, name: str) -> QComboBox:
    box = QComboBox()
    box.addItems(list(items))
    box.setToolTip(tooltip)
    box.setObjectName(name)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return box


def float_edit(tooltip: str, name: str) -> QLineEdit:
    edit = QLineEdit()
    edit.setValidator(QDoubleValidator())
    edit.setToolTip(tooltip)
    edit.setObjectName(name)
    edit.setFixedWidth(edit.fontMetrics().horizontalAdvance("-0.00000e+00") + 10)
    return edit


def format_level(value: float) -> str:
    return f"{value:.6g}"


class DisplayControls(QWidget):
    """Colour and value controls; ``changed(what)`` names the setting that changed."""

    changed = Signal(str)

    def __init__(self, parent: QWidget | None = None, reductions: bool = True) -> None:
        super().__init__(parent)
        self.colormap = combo(COLORMAPS, "Colour map (diverging maps are centred on zero)", "colormap")
        self.level_mode = combo(LEVEL_MODES, "Colour levels: full range, clip a percentile at each end, or "
                                "typed / dragged on the colour bar", "levelMode")
        self.percent = QDoubleSpinBox()
        self.percent.setObjectName("levelPercent")
        self.percent.setRange(0.0, 25.0)
        self.percent.setDecimals(2)
        self.percent.setSingleStep(0.1)
        self.percent.setValue(DEFAULT_PERCENT)
        self.percent.setSuffix(" %")
        self.percent.setToolTip("Percent of the pixels left out at each end")
        self.low = float_edit("Lowest colour level", "levelLow")
        self.high = float_edit("Highest colour level", "levelHigh")
        self.log = QCheckBox("log |x|")
        self.log.setObjectName("logScale")
        self.log.setToolTip("Colour by log10 of the magnitude (zeros are left blank)")
        self.method = combo(METHODS, "How a pixel summarises its block of elements when the plane has more "
                            "elements than the screen has pixels", "reduction")
        for i, method in enumerate(METHODS.values()):
            self.method.setItemData(i, METHOD_HELP[method], Qt.ItemDataRole.ToolTipRole)
        self.complex_mode = combo(COMPLEX_MODES, "Part of the complex values shown", "complexMode")
        self.present_as = combo([], "How the stored bits are read", "presentAs")
        self.reset = QToolButton()
        self.reset.setText("Fit")
        self.reset.setToolTip("Show the whole plane")
        self.reset.setObjectName("resetView")
        self.aspect = QCheckBox("1:1")
        self.aspect.setToolTip("Square pixels")
        self.aspect.setObjectName("aspectLocked")

        self._complex_label = QLabel("show")
        self._present_label = QLabel("read as")
        self.present_group = group(self._present_label, self.present_as)
        self.complex_group = group(self._complex_label, self.complex_mode)
        self.method_group = group(QLabel("reduce"), self.method)
        self.buttons = group(self.aspect, self.reset)
        layout = FlowLayout(self, spacing=8)
        self.colour_group = group(QLabel("colours"), self.colormap)
        self.levels_group = group(QLabel("levels"), self.level_mode, self.percent, self.low, QLabel("–"), self.high)
        for widget in (self.present_group, self.complex_group, self.colour_group, self.levels_group, self.log,
                       self.method_group, self.buttons):
            layout.addWidget(widget)
        self._reductions = reductions
        self.method_group.setVisible(reductions)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

        self.colormap.currentTextChanged.connect(lambda: self.changed.emit("colormap"))
        self.level_mode.currentTextChanged.connect(self._mode_changed)
        self.percent.valueChanged.connect(lambda: self.changed.emit("levels"))
        self.low.editingFinished.connect(self._typed)
        self.high.editingFinished.connect(self._typed)
        self.log.toggled.connect(lambda: self.changed.emit("log"))
        self.method.currentTextChanged.connect(lambda: self.changed.emit("method"))
        self.complex_mode.currentTextChanged.connect(lambda: self.changed.emit("complex"))
        self.present_as.currentTextChanged.connect(lambda: self.changed.emit("present"))
        self.reset.clicked.connect(lambda: self.changed.emit("reset"))
        self.aspect.toggled.connect(lambda: self.changed.emit("aspect"))
        self._mode_changed(emit=False)

    def set_mode(self, mode: str) -> None:
        """``image`` (every control), ``line`` (no colours, levels or reduction) or ``none`` (hidden)."""
        self.setVisible(mode != "none")
        image = mode == "image"
        for widget in (self.colour_group, self.levels_group, self.aspect):
            widget.setVisible(image)
        self.method_group.setVisible(image and self._reductions)

    def add_button(self, widget: QWidget) -> None:
        """Append a view's own button (export, view as sparse) to the last group."""
        layout = self.buttons.layout()   # group() gives every group its row layout
        if layout is not None:
            layout.addWidget(widget)

    # -- state ---------------------------------------------------------------------------------------------
    @property
    def method_name(self) -> str:
        return METHODS[self.method.currentText()]

    def set_method(self, method: str) -> None:
        label = next(k for k, v in METHODS.items() if v == method)
        self.method.setCurrentText(label)

    def set_kinds(self, is_complex: bool, presentations: list[str]) -> None:
        """Show the complex-part and read-as choices only when they apply."""
        self.complex_group.setVisible(is_complex)
        self.present_as.blockSignals(True)
        self.present_as.clear()
        self.present_as.addItems(presentations)
        self.present_as.blockSignals(False)
        self.present_group.setVisible(len(presentations) > 1)

    def manual_levels(self) -> tuple[float, float] | None:
        try:
            return float(self.low.text()), float(self.high.text())
        except ValueError:
            return None

    def show_levels(self, low: float, high: float) -> None:
        """Display the levels in effect (without switching mode)."""
        self.low.setText(format_level(low))
        self.high.setText(format_level(high))

    def set_manual(self, low: float, high: float) -> None:
        self.show_levels(low, high)
        self.level_mode.blockSignals(True)
        self.level_mode.setCurrentText("manual")
        self.level_mode.blockSignals(False)
        self.percent.setVisible(False)

    def set_colormap_quietly(self, name: str) -> None:
        self.colormap.blockSignals(True)
        self.colormap.setCurrentText(name)
        self.colormap.blockSignals(False)

    def _typed(self) -> None:
        if self.manual_levels() is None:
            return
        if self.level_mode.currentText() != "manual":
            self.level_mode.blockSignals(True)
            self.level_mode.setCurrentText("manual")
            self.level_mode.blockSignals(False)
            self.percent.setVisible(False)
        self.changed.emit("levels")

    def _mode_changed(self, *args, emit: bool = True) -> None:
        self.percent.setVisible(self.level_mode.currentText() == "percentile")
        if emit:
            self.changed.emit("levels")
