"""NaN and ±Inf have colours of their own in the heatmap (a NaN is not the diverging map's white midpoint, an
infinity not the end colour of the largest finite value), a legend names them, "Next NaN/Inf" visits each in
row-major order and wraps around, and typed levels do not stick to the next tensor."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF

from tests.gui.inspect_helpers import heatmap_painted
from ztviewer.gui.views.inspect.export import SliceSource
from ztviewer.gui.views.inspect.nonfinite import MARK_COLOURS, next_nonfinite, nonfinite_marks
from ztviewer.session.inspect_data import DenseData

NAN, POS, NEG = (2, 3), (5, 5), (6, 1)


def _plane() -> np.ndarray:
    a = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    a[4, 4] = 0.0                                       # the diverging map's midpoint colour
    a[NAN], a[POS], a[NEG] = np.nan, np.inf, -np.inf
    return a


def _colour_at(qtbot, heatmap, row: int, col: int) -> tuple[int, int, int]:
    plot = heatmap.image
    scene = plot.view.mapViewToScene(QPointF(col, row))
    at = plot.mapFromScene(scene)
    colour = plot.grab().toImage().pixelColor(int(at.x() * plot.devicePixelRatioF()),
                                               int(at.y() * plot.devicePixelRatioF()))
    return colour.red(), colour.green(), colour.blue()


def _show(qtbot, heatmap, a: np.ndarray) -> None:
    heatmap.set_data(DenseData(a, a.dtype.name), "t")
    qtbot.waitUntil(lambda: heatmap_painted(heatmap), timeout=10_000)


def test_nan_and_infinities_are_drawn_in_their_own_colours_and_named(qtbot, heatmap):
    _show(qtbot, heatmap, _plane())
    assert heatmap.base.image.exact
    for position, name in ((NAN, "NaN"), (POS, "+Inf"), (NEG, "−Inf")):
        assert _colour_at(qtbot, heatmap, *position) == MARK_COLOURS[name][:3], name
    midpoint = _colour_at(qtbot, heatmap, 4, 4)
    assert midpoint != MARK_COLOURS["NaN"][:3] and min(midpoint) > 200    # white-ish: what NaN was drawn as
    legend = heatmap.legend.text()
    assert all(name in legend for name in ("NaN", "+Inf", "−Inf"))
    finite = np.ones((8, 8), np.float32)
    _show(qtbot, heatmap, finite)
    assert heatmap.legend.text() == "" and not heatmap.image.marks[id(heatmap.image.base)].isVisible()


def test_a_reduced_overview_keeps_a_block_that_is_all_nan_marked(qtbot, heatmap):
    a = np.random.default_rng(0).standard_normal((3000, 3000)).astype(np.float32)
    a[:600, :600] = np.nan
    _show(qtbot, heatmap, a)
    assert not heatmap.base.image.exact
    assert _colour_at(qtbot, heatmap, 100, 100) == MARK_COLOURS["NaN"][:3]
    assert "NaN" in heatmap.legend.text()


def test_next_nan_or_inf_visits_each_in_order_and_wraps(qtbot, heatmap):
    _show(qtbot, heatmap, _plane())
    seen = []
    heatmap.finder.went_to.connect(seen.append)
    for expected in (NAN, POS, NEG, NAN):
        with qtbot.waitSignal(heatmap.finder.went_to, timeout=10_000):
            heatmap.finder.button.click()
        assert seen[-1] == expected
        assert heatmap.readout.text().startswith(f"[{expected[0]}, {expected[1]}] = ")
        assert heatmap.image.found.isVisible()


def test_integers_have_nothing_to_find_and_a_plane_without_any_says_so(qtbot, heatmap):
    _show(qtbot, heatmap, np.arange(64, dtype=np.int32).reshape(8, 8))
    assert not heatmap.finder.button.isEnabled()
    _show(qtbot, heatmap, np.ones((8, 8), np.float32))
    said = []
    heatmap.message.connect(said.append)
    with qtbot.waitSignal(heatmap.message, timeout=10_000):
        heatmap.finder.button.click()
    assert said == ["No NaN or ±Inf in this plane"]


def test_typed_levels_do_not_stick_to_the_next_tensor(qtbot, heatmap):
    _show(qtbot, heatmap, np.linspace(0, 1, 64, dtype=np.float32).reshape(8, 8))
    heatmap.controls.low.setText("0.25")
    heatmap.controls.high.setText("0.5")
    heatmap.controls.high.editingFinished.emit()
    assert heatmap.controls.level_mode.currentText() == "manual" and heatmap.image.levels() == (0.25, 0.5)
    _show(qtbot, heatmap, np.linspace(10, 20, 64, dtype=np.float32).reshape(8, 8))
    assert heatmap.controls.level_mode.currentText() == "percentile"
    low, high = heatmap.image.levels()
    assert 10 <= low < high <= 20


@pytest.mark.parametrize("after, expected", [(None, (0, 1)), ((0, 1), (2, 0)), ((2, 0), (0, 1)), ((3, 3), (0, 1))])
def test_the_search_reads_row_major_from_the_element_after(after, expected):
    a = np.zeros((4, 4), np.float32)
    a[0, 1], a[2, 0] = np.nan, -np.inf
    assert next_nonfinite(SliceSource(a, "float32"), after) == expected
    assert next_nonfinite(SliceSource(np.zeros((4, 4), np.float32), "float32"), after) is None


def test_marks_of_complex_values_and_of_finite_ones():
    z = np.array([[1 + 1j, complex(np.nan, 0)], [complex(np.inf, 0), complex(0, -np.inf)]], np.complex64)
    rgba, present = nonfinite_marks(z)
    assert present == ["NaN", "+Inf"] and tuple(rgba[0, 0]) == (0, 0, 0, 0)
    assert tuple(rgba[1, 1]) == tuple(rgba[1, 0]) == MARK_COLOURS["+Inf"] and tuple(rgba[0, 1]) == MARK_COLOURS["NaN"]
    assert nonfinite_marks(np.ones(3, np.float32)) is None and nonfinite_marks(np.arange(3)) is None
