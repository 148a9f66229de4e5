"""One colour scale for the A and B heatmaps of a Compare tab: while the 'Link levels' box is ticked both use one
colour map and the same automatic levels, computed from both sides' level samples (the values the heatmap's own
automatic levels come from, :func:`ztviewer.analysis.reduce.level_sample`)."""
from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QCheckBox

from ..views.inspect import levels as lv
from ..views.inspect.heatmap import HeatmapView


class LinkedLevels:
    """Keeps ``a`` and ``b`` on one colour scale while ``toggle`` is checked."""

    def __init__(self, a: HeatmapView, b: HeatmapView, toggle: QCheckBox) -> None:
        self.views, self.toggle = (a, b), toggle
        toggle.toggled.connect(self._toggled)
        for view in self.views:
            view.shared_levels = lambda view=view: self.levels_for(view)
            view.rendered.connect(self.relink)

    def levels_for(self, view: HeatmapView) -> tuple[float, float] | None:
        """Both sides' levels, in the level mode of the view asking; ``None``: the view's own."""
        if not self.toggle.isChecked():
            return None
        log = view.controls.log.isChecked()
        if any(v.data is None or v.controls.log.isChecked() != log for v in self.views):
            return None
        samples = [v.level_values() for v in self.views]
        values = [np.asarray(s, dtype=np.float64).reshape(-1) for s in samples if s is not None]
        if not values:
            return None
        return lv.compute_levels(np.concatenate(values), view.controls.level_mode.currentText(),
                                 view.controls.percent.value(), view.levels_centred())

    def relink(self) -> None:
        """A new image on either side: both take one colour map (diverging if either is signed) and levels."""
        if not self.toggle.isChecked():
            return
        samples = [v.level_values() for v in self.views]
        if any(s is None for s in samples) or any(v.data is None or v.data.kind == "complex" for v in self.views):
            return
        logs = {v.controls.log.isChecked() for v in self.views}
        if len(logs) == 1:
            signed = any(lv.is_signed(np.asarray(s)) for s in samples) and not logs.pop()
            name = lv.default_colormap(signed)
            for view in self.views:
                view.use_colormap(name)
        for view in self.views:
            view.apply_levels()

    def _toggled(self, on: bool) -> None:
        if on:
            self.relink()
            return
        for view in self.views:              # each side's own map and levels again
            view.use_colormap(None)
            view.apply_levels()
