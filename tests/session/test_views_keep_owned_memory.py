"""What the inspect views keep of a file is memory of their own (issue 16 §10): a plane block, a rendered image,
a row of cells, a sparse structure, tensor-train cores. Only the dense data itself stays a view of the file's
map, read through checked copies; so a file truncated later by another program can fault nothing the views
hold. (The truncation itself is exercised in child processes: tests/gui/test_truncated_under_views.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from ztviewer.analysis.plane_jobs import Inline, render_plane
from ztviewer.codec import open_file
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.mapped_pages import map_of
from ztviewer.session.inspect_data import load_dense, load_sparse, load_tt
from ztviewer.session.value_grid import PlaneCells, SparseEntries

DENSE = np.arange(6 * 40 * 50, dtype=np.float32).reshape(6, 40, 50)


@pytest.fixture
def tf(tmp_path):
    indptr = np.array([0, 1, 1, 3], np.uint64)
    sparse = SparseArray("sparse_csr", (3, 5), np.array([1.5, -2, 7], np.float32), indptr=indptr,
                         indices=np.array([4, 0, 2], np.uint64))
    cores = [np.ones((1, 3, 2)), np.ones((2, 4, 1))]
    path = tmp_path / "f.zt"
    save_arrays(path, {"dense": DENSE, "sparse": sparse, "train": TensorTrainArray(cores)}, "zt")
    with open_file(path) as opened:
        yield opened


def test_dense_data_is_the_map_but_what_is_read_from_it_is_owned(tf):
    data = load_dense(tf, tf.tensor("dense"))
    assert map_of(data.array) is not None                 # not read whole: planes of it are read as shown
    plane = data.plane((1, 2), {0: 3})
    block = plane[2:5, 7:9]
    assert map_of(block) is None
    np.testing.assert_array_equal(block, DENSE[3, 2:5, 7:9])
    np.testing.assert_array_equal(np.asarray(plane), DENSE[3])
    rendered = render_plane(Inline(), plane, (0, 40, 0, 50), (40, 50), "max")
    assert map_of(rendered.image.data) is None and map_of(rendered.sample) is None
    np.testing.assert_array_equal(rendered.image.data, DENSE[3])
    cells = PlaneCells(plane, "float32", (1, 2), {0: 3}, 3)
    assert cells.block(1, 2, 0, 3) == [DENSE[3, 1, :3].tolist()]
    assert data.value((5, 39, 49)) == float(DENSE[5, 39, 49])


def test_sparse_structures_and_tensor_train_cores_are_read_into_memory(tf):
    sparse = load_sparse(tf, tf.tensor("sparse"))
    assert all(map_of(np.asarray(a)) is None for a in (sparse.indptr, sparse.indices, sparse.values))
    assert SparseEntries(sparse).block(0, 3, 0, 3) == [[0, 4, 1.5], [2, 0, -2.0], [2, 2, 7.0]]
    cores = load_tt(tf, tf.tensor("train")).cores
    assert [map_of(c) for c in cores] == [None, None] and [c.shape for c in cores] == [(1, 3, 2), (2, 4, 1)]


def test_a_plane_of_a_changed_file_refuses_to_read(tf, tmp_path):
    import os

    data = load_dense(tf, tf.tensor("dense"))
    plane = data.plane((1, 2), {0: 0})
    stat = os.stat(tf.path)
    os.utime(tf.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # rewritten in place: same size
    with pytest.raises(SourceChanged, match="modification time changed"):
        plane[0:2, 0:2]
    with pytest.raises(SourceChanged):
        data.value((0, 0, 0))


def test_a_large_sparse_structure_stays_mapped_and_is_checked_before_every_read(tf, monkeypatch):
    """Past OWNED_SPARSE stored bytes the spy plot and the entries grid read views of the map (pages given back as
    they go), checking the file before each read."""
    import os

    from ztviewer.analysis.spy_sources import CsrSource
    from ztviewer.session import inspect_data

    monkeypatch.setattr(inspect_data, "OWNED_SPARSE", 0)
    sparse = load_sparse(tf, tf.tensor("sparse"))
    assert map_of(np.asarray(sparse.values)) is not None
    entries, spy = SparseEntries(sparse), CsrSource(sparse)
    assert entries.block(0, 1, 0, 3) == [[0, 4, 1.5]]
    stat = os.stat(tf.path)
    os.utime(tf.path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    for read in (lambda: entries.block(0, 1, 0, 3), lambda: spy.markers((0, 3, 0, 5))):
        with pytest.raises(SourceChanged):
            read()
