"""ComparisonSession without Qt: pairs arriving, filter, sort by metric, selection, plane and jump-to-element."""
from __future__ import annotations

import numpy as np
import pytest
from safetensors.numpy import save_file

from ztviewer.analysis.diff import DiffOptions, iter_pair_diffs
from ztviewer.analysis.diff.planes import DifferenceData, pair_histograms
from ztviewer.codec.multifile import open_path
from ztviewer.session.comparison import ComparisonSession, Plane


@pytest.fixture
def session(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)
    y = rng.standard_normal((7, 3)).astype(np.float32)
    save_file({"x": x, "y": y, "z": np.ones(3, np.float32)}, str(tmp_path / "a.safetensors"))
    x2, y2 = x.copy(), y.copy()
    x2[3, 1, 4] += 1.0
    y2[0, 0] += 0.01
    save_file({"x": x2, "y": y2, "z": np.ones(3, np.float32)}, str(tmp_path / "b.safetensors"))
    s = ComparisonSession(str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors"))
    tf_a, tf_b = open_path(s.path_a), open_path(s.path_b)
    s.set_files(tf_a, tf_b, [])
    events: list[tuple[str, object]] = []
    for name in ("pairs_added", "order_changed", "selection_changed", "plane_changed", "focus_changed"):
        getattr(s, name).connect(lambda value, name=name: events.append((name, value)))
    for pair in iter_pair_diffs(tf_a, tf_b, DiffOptions(worst=3)):
        s.add_pairs([pair])
    s.finish("done")
    yield s, events, (x, x2)
    s.close()


def test_filter_and_sort(session):
    s, events, _ = session
    def names() -> list[str]:
        return [s.pairs[n].name for n in s.order]

    assert names() == ["x", "y", "z"] and [e for e in events if e[0] == "pairs_added"] == [
        ("pairs_added", [0]), ("pairs_added", [1]), ("pairs_added", [2])]
    s.set_only_differences(True)
    assert names() == ["x", "y"]
    s.set_sort("max |Δ|", descending=False)
    assert names() == ["y", "x"]
    s.set_sort("cosine", descending=False)
    assert names() == ["x", "y"]                       # the bigger bump has the lower cosine
    s.set_only_differences(False)
    assert names() == ["x", "y", "z"]                  # no number: last
    with pytest.raises(ValueError):
        s.set_sort("nonsense")


def test_select_plane_and_jump(session):
    s, events, _ = session
    s.select(0)
    assert s.selected_pair.name == "x" and s.plane == Plane((1, 2), ((0, 0),))
    a, b = s.tensors()
    assert a.name == "x" and b.name == "x"
    worst = s.selected_pair.stats.worst[0][0]
    assert worst == (3, 1, 4)
    s.jump_to(worst)
    assert s.plane == Plane((1, 2), ((0, 3),)) and s.focus == (3, 1, 4)
    assert events[-2:] == [("plane_changed", Plane((1, 2), ((0, 3),))), ("focus_changed", (3, 1, 4))]
    s.set_plane((0, 2), {1: 1})
    s.jump_to(worst)
    assert s.plane == Plane((0, 2), ((1, 1),))          # the displayed axes are kept


def test_difference_plane_and_histograms(session):
    _, _, (x, x2) = session
    diff = DifferenceData(x, "float32", x2, "float32")
    plane = diff.plane((1, 2), {0: 3})
    assert plane.shape == (6, 5) and plane.dtype == np.float64
    expected = x2[3].astype(np.float64) - x[3]
    assert np.array_equal(plane[0:6, 0:5], expected) and np.array_equal(plane[::2, 1:4], expected[::2, 1:4])
    assert diff.value((3, 1, 4)) == pytest.approx(1.0, rel=1e-6)
    hist = pair_histograms(x, "float32", x2, "float32", bins=16)
    low, high = min(x.min(), x2.min()), max(x.max(), x2.max())
    assert hist.edges[0] == pytest.approx(low) and hist.edges[-1] == pytest.approx(high)
    assert np.array_equal(hist.counts_a, np.histogram(x, 16, range=(hist.edges[0], hist.edges[-1]))[0])
    assert hist.counts_b.sum() == x2.size


def test_leaving_the_plane_leaves_the_focus(session):
    s, events, _ = session
    s.select(0)
    s.jump_to((3, 1, 4))
    s.set_plane((1, 2), {0: 3})                          # the same plane: still looking at it
    assert s.focus == (3, 1, 4)
    s.set_plane((1, 2), {0: 2})
    assert s.focus is None and events[-1] == ("focus_changed", None)


def test_pair_histograms_count_a_bounded_spread_sample():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((700, 900)).astype(np.float32)
    y = (x * 2).astype(np.float32)
    hist = pair_histograms(x, "float32", y, "float32", bins=32, sample=50_000)
    step = -(-x.size // 50_000)
    sample_x, sample_y = x.reshape(-1)[::step], y.reshape(-1)[::step]
    assert hist.sampled and hist.counted == (sample_x.size, sample_y.size) and hist.total == (x.size, y.size)
    low, high = float(min(sample_x.min(), sample_y.min())), float(max(sample_x.max(), sample_y.max()))
    assert (hist.edges[0], hist.edges[-1]) == (pytest.approx(low), pytest.approx(high))
    assert np.array_equal(hist.counts_b, np.histogram(sample_y.astype(np.float64), 32, range=(low, high))[0])
    column_major = np.asfortranarray(x)                                  # not contiguous in C order: gathered
    gathered = pair_histograms(column_major, "float32", y, "float32", bins=32, sample=50_000)
    assert np.array_equal(gathered.counts_a, hist.counts_a)
    whole = pair_histograms(x, "float32", y, "float32", bins=32, sample=x.size)
    assert not whole.sampled and whole.counts_a.sum() == x.size
