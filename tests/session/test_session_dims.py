"""Dims: the plane of an N-D tensor the inspect view shows, driven without Qt."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ztviewer.codec import open_file
from ztviewer.session.dims import Dims
from ztviewer.session.file_session import FileSession
from ztviewer.session.inspect_data import load_dense

SHAPES_RANK4_SHA256 = "786ab1f7d9ded0ebde9fe2b549e96062bab06aaa054a95afcb74e3d9834ec983"   # corpus MANIFEST.json


def test_axes_swap_when_one_takes_the_others_place_and_indices_stay():
    dims = Dims((2, 3, 4, 5))
    events: list[str] = []
    dims.changed.connect(events.append)
    assert dims.axes == (0, 1) and dims.fixed() == {2: 0, 3: 0}
    dims.set_index(2, 3)
    dims.set_index(3, 99)                                 # clamped to the extent
    assert dims.fixed() == {2: 3, 3: 4} and events == ["index", "index"]
    dims.set_row_axis(1)                                  # the column axis: the two swap
    assert dims.axes == (1, 0) and dims.fixed() == {2: 3, 3: 4}
    dims.set_col_axis(3)                                  # axis 3 is displayed now, 0 is sliced from its start
    assert dims.axes == (1, 3) and dims.fixed() == {0: 0, 2: 3}
    assert dims.index_of(2, 4) == (0, 2, 3, 4)
    assert events[-2:] == ["axes", "axes"]
    with pytest.raises(ValueError):
        dims.set_axes(1, 1)
    with pytest.raises(ValueError):
        dims.set_index(1, 0)                               # a displayed axis has no slice index


def test_a_new_shape_keeps_the_slice_where_it_fits():
    dims = Dims((4, 5, 6))
    dims.set_index(2, 5)
    dims.set_shape((4, 5, 3))
    assert dims.fixed() == {2: 2}
    dims.set_shape((7,))
    assert dims.axes == (0, 1) and dims.displayed == (0,) and dims.fixed() == {} and dims.index_of(0, 3) == (3,)
    dims.set_shape((), (5, 6))
    assert dims.index_of(0, 0) == () and dims.displayed == ()
    dims.set_shape((2, 3), (1, 1))                         # not two different axes: the first two
    assert dims.axes == (0, 1)


def test_the_sessions_plane_picks_the_values_of_a_corpus_tensor(corpus_dir):
    session = FileSession(open_file(corpus_dir / "zt_v1.0/ztensor-1.0.1/shapes.zt"))
    tensor = session.select_tensor("rank4_f32").tensor
    data = load_dense(session.tensor_file, tensor, cache=session.cache)
    session.dims.set_shape(tensor.shape, (2, 3))
    session.dims.set_index(0, 1)
    session.dims.set_index(1, 2)
    plane = np.asarray(data.plane(session.dims.axes, session.dims.fixed()))
    reference = np.array(data.array, dtype="<f4")
    assert hashlib.sha256(reference.tobytes()).hexdigest() == SHAPES_RANK4_SHA256     # the producer's bytes
    np.testing.assert_array_equal(plane, reference[1, 2])
    assert data.value(session.dims.index_of(3, 4)) == reference[1, 2, 3, 4]
    session.dims.set_axes(0, 2)                          # rows = axis 0, columns = axis 2, slices on 1 and 3
    session.dims.set_index(3, 4)
    plane = np.asarray(data.plane(session.dims.axes, session.dims.fixed()))
    np.testing.assert_array_equal(plane, reference[:, 2, :, 4])
    session.close()
