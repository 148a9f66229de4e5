"""Tensor-train browser wiring: summary and compression, chain diagram, core slices and unfoldings with their
singular values, and reconstructed 2-D slices computed from the cores."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gui.inspect_helpers import heatmap_painted, show_and_wait
from ztviewer.codec import open_file, tt
from ztviewer.codec.arrays import TensorTrainArray


@pytest.fixture
def t5(corpus_dir):
    with open_file(corpus_dir / "blz/t5_3x4x2x5x3_lowrank.blz") as tf:
        yield tf


def test_summary_chain_and_rank_profile(qtbot, panel, t5):
    tensor = show_and_wait(qtbot, panel, t5, "t5_3x4x2x5x3_lowrank")
    view = panel.tt
    assert panel.stack.currentWidget() is view
    cores = tt.tt_cores(t5, tensor)
    assert view.chain.ranks == tt.ranks(cores) and view.chain.dims == tuple(tensor.shape)
    ratio = tt.compression_ratio(tensor.shape, tt.ranks(cores), 8)
    assert f"{ratio:,.4g}×" in view.summary_label.text()
    _x, y = view.profile.ranks.getData()
    np.testing.assert_array_equal(y, tt.ranks(cores))


def test_core_slices_unfoldings_and_singular_values(qtbot, panel, t5):
    tensor = show_and_wait(qtbot, panel, t5, "t5_3x4x2x5x3_lowrank")
    view = panel.tt
    core = tt.tt_cores(t5, tensor)[2]
    view.chain.select(2)  # clicking a core in the diagram selects it
    view.index_spin.setValue(1)
    qtbot.waitUntil(lambda: view.core is not None and view.core.shape == core[:, 1, :].shape and not view.slot.busy)
    np.testing.assert_allclose(view.core_plot.base.image, core[:, 1, :])
    expected = np.linalg.svd(core[:, 1, :], compute_uv=False)
    np.testing.assert_allclose(view.core.singular, expected)
    np.testing.assert_allclose(10 ** view.sv_curve.getData()[1], expected)  # the plot is log-scaled
    view.view_box.setCurrentText("left unfolding")
    qtbot.waitUntil(lambda: not view.slot.busy and view.core.shape == (core.shape[0] * core.shape[1], core.shape[2]))
    np.testing.assert_allclose(view.core_plot.base.image, core.reshape(-1, core.shape[2]))
    view.view_box.setCurrentText("right unfolding")
    qtbot.waitUntil(lambda: not view.slot.busy and view.core.shape == (core.shape[0], core.shape[1] * core.shape[2]))
    assert not view.index_spin.isEnabled()


def test_reconstructed_slice_contracts_the_cores(qtbot, panel, t5):
    tensor = show_and_wait(qtbot, panel, t5, "t5_3x4x2x5x3_lowrank")
    view = panel.tt
    view.tabs.setCurrentWidget(view.reconstruction)
    heat = view.reconstruction
    qtbot.waitUntil(lambda: heatmap_painted(heat))
    cores = tt.tt_cores(t5, tensor)
    assert heat.axes.axes() == (3, 4)
    heat.axes.set_index(0, 2)
    heat.axes.set_index(2, 1)
    qtbot.waitUntil(lambda: heatmap_painted(heat) and heat.axes.fixed()[0] == 2)
    expected = tt.slice2d(cores, (3, 4), {0: 2, 1: 0, 2: 1})
    np.testing.assert_allclose(heat.image.base.image, expected, rtol=1e-12)
    heat._hovered((1, 2))
    value = tt.element(cores, (2, 0, 1, 1, 2))
    assert heat.readout.text().startswith("[2, 0, 1, 1, 2] = " + f"{value:.7g}")


def test_complex_tt_and_large_slices_go_through_the_reduction(qtbot, panel, open_arrays, corpus_dir):
    with open_file(corpus_dir / "blz/c2_5x6_complex128_truncated.blz") as tf:
        show_and_wait(qtbot, panel, tf, "c2_5x6_complex128_truncated")
        assert panel.tt.reconstruction.controls.complex_group.isVisibleTo(panel.tt.reconstruction)
    rng = np.random.default_rng(0)
    cores = [rng.standard_normal((1, 600, 3)), rng.standard_normal((3, 700, 2)), rng.standard_normal((2, 3, 1))]
    tf = open_arrays({"big": TensorTrainArray(cores)}, "tt.zt")
    show_and_wait(qtbot, panel, tf, "big")
    heat = panel.tt.reconstruction
    qtbot.waitUntil(lambda: heatmap_painted(heat), timeout=10_000)
    assert heat.axes.axes() == (1, 2)
    heat.axes.set_axes(0, 1)
    qtbot.waitUntil(lambda: heatmap_painted(heat) and heat.base.image.data.shape[1] <= 700, timeout=10_000)
    full = tt.slice2d(cores, (0, 1), {2: 0})
    image = heat.base.image
    if image.method == "exact":
        np.testing.assert_allclose(image.data, full)
    else:  # a peak reduction keeps the largest magnitude of the slice
        assert np.isclose(np.abs(image.data).max(), np.abs(full).max())


def test_rank1_tensor_train(qtbot, panel, corpus_dir):
    with open_file(corpus_dir / "blz/rank1_2x3x4x5.blz") as tf:
        show_and_wait(qtbot, panel, tf, "rank1_2x3x4x5")
        assert set(panel.tt.chain.ranks) == {1}
        assert "max rank</td><td>1" in panel.tt.summary_label.text()
