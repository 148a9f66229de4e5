"""Drives the 1-D line plot of a :class:`~.heatmap.HeatmapView`: the profile of the visible span, computed
on a worker (exact points or a min/max envelope), recomputed when the user zooms or pans."""
from __future__ import annotations

import numpy as np

from ztviewer.analysis.plane_jobs import Inline, LineData, render_line
from ztviewer.session.inspect_data import format_value

from .runner import JobSlot

SYNC_POINTS = 1 << 16


class LineController:
    """Owns the job slot and the current profile of the heatmap view's :class:`~.line_view.LinePlot`."""

    def __init__(self, view, pool=None) -> None:
        self.view = view
        self.plot = view.line
        self.slot = JobSlot(pool, view)
        self.slot.busy_changed.connect(view._busy_changed)
        self.slot.progress.connect(view._progress)
        self.plane = None
        self.current: LineData | None = None
        self.request = 0
        self.plot.range_settled.connect(self._settled)
        self.plot.hovered.connect(self._hovered)

    def start(self, row_plane, length: int) -> None:
        self.plane = row_plane
        self.current = None
        self.plot.set_length(length, "axis 0")
        self.plot.set_value_label(self.view._bar_label())
        self._render((0, length), autorange=True)

    def _kw(self) -> dict:
        return {"dtype_name": self.view.data.dtype_name, "complex_mode": self.view.complex_mode}

    def _render(self, span: tuple[int, int], autorange: bool = False) -> None:
        plane, width, kw = self.plane, self.plot.screen_width(), self._kw()
        self.request += 1
        request = self.request
        done = lambda data: self._show(data, autorange)  # noqa: E731
        if span[1] - span[0] <= SYNC_POINTS:
            self.slot.cancel()
            done(render_line(Inline(), plane, span, width, request=request, **kw))
            return
        self.slot.start(lambda task: render_line(task, plane, span, width, request=request, **kw), done,
                        failed=self.view._failed)

    def _show(self, data: LineData, autorange: bool) -> None:
        self.current = data
        self.plot.show_line(self._transformed(data), autorange_y=True)
        points = len(data.x)
        self.view.info.setText(f"{points} points, exact" if data.exact
                               else f"{points} bins, min–max of ≤{-(-(data.span[1] - data.span[0]) // points)} each")
        self.view.rendered.emit()

    def _transformed(self, data: LineData) -> LineData:
        if not self.view.controls.log.isChecked():
            return data
        from .levels import log_magnitude

        if data.values is not None:
            return LineData(data.x, log_magnitude(data.values), None, None, data.span, data.request)
        if data.low is None or data.high is None:
            return data
        a, b = np.abs(data.low), np.abs(data.high)
        straddles = (data.low < 0) & (data.high > 0)
        low = log_magnitude(np.where(straddles, 0.0, np.minimum(a, b)))
        high = log_magnitude(np.maximum(a, b))
        return LineData(data.x, None, low, high, data.span, data.request)

    def redisplay(self) -> None:
        self.plot.set_value_label(self.view._bar_label())
        if self.current is not None:
            self.plot.show_line(self._transformed(self.current))

    def _settled(self) -> None:
        if self.plane is None or self.view.stack.currentWidget() is not self.plot:
            return
        span = self.plot.visible_span()
        current = self.current
        if span[1] <= span[0] or current is None:
            return
        if current.exact and current.span[0] <= span[0] and span[1] <= current.span[1]:
            return
        if current.span == span:
            return
        self._render(span)

    def _hovered(self, x) -> None:
        view = self.view
        if x is None or view.data is None:
            view.readout.setText(" ")
            return
        view.readout.setText(f"[{x}] = {format_value(view.data.value((x,)))}")
