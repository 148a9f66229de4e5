"""Strided previews of file maps gathered with positional reads: the same pixels as numpy's strided copy, for
every orientation of the plane, with and without the POSIX calls; the map serves what the reads cannot."""
from __future__ import annotations

import numpy as np
import pytest

from tests._no_posix import hidden_posix_calls
from ztviewer.analysis import mapped, positional
from ztviewer.analysis.reduce import strided_preview
from ztviewer.analysis.slicing import plane
from ztviewer.codec import portable
from ztviewer.codec.source import LocalFile, source_of_map

SHAPE = (3, 700, 900)


@pytest.fixture
def mapped_array(tmp_path, monkeypatch):
    monkeypatch.setattr(mapped, "SPAN", 64 << 10)  # small planes take the gathering path
    values = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)
    path = tmp_path / "plane.bin"
    path.write_bytes(b"\0" * 24 + values.tobytes())
    source = LocalFile(path)
    array = np.frombuffer(source.view(24, values.nbytes), np.float32).reshape(SHAPE)
    yield array, values
    del array
    source.close()


def _reads(monkeypatch) -> list[int]:
    calls: list[int] = []
    real = positional._read_rows

    def counting(fd, view, outer, offsets, run, step):
        calls.append(len(offsets))
        return real(fd, view, outer, offsets, run, step)

    monkeypatch.setattr(positional, "_read_rows", counting)
    monkeypatch.setattr(positional, "_cached", lambda *a: False)  # as if cold
    return calls


@pytest.mark.parametrize(("axes", "fixed"), [((1, 2), {0: 1}), ((2, 1), {0: 2}), ((0, 2), {1: 5})])
@pytest.mark.parametrize("flip", [False, True])
def test_preview_pixels_equal_numpy_strided_copy(mapped_array, monkeypatch, axes, fixed, flip):
    array, values = mapped_array
    calls = _reads(monkeypatch)
    view = plane(array, axes, fixed)
    expected_view = plane(values, axes, fixed)
    if flip:
        view, expected_view = view[::-1, ::-1], expected_view[::-1, ::-1]
    image = strided_preview(mapped.releasing(view), 50, 60)
    s0, s1 = -(-view.shape[0] // 50), -(-view.shape[1] // 60)
    np.testing.assert_array_equal(image.data, expected_view[::s0, ::s1])
    assert image.data.flags.c_contiguous
    if max(abs(view.strides[0]), abs(view.strides[1])) * view.shape[0] > mapped.SPAN and \
            min(abs(view.strides[0]), abs(view.strides[1])) * max(s0, s1) <= 4096:
        assert calls, "read with positional reads"


def test_without_posix_calls_the_rows_are_still_read(mapped_array, monkeypatch):
    array, values = mapped_array
    calls = _reads(monkeypatch)
    with hidden_posix_calls():
        image = strided_preview(mapped.releasing(array[1]), 70, 90)
    np.testing.assert_array_equal(image.data, values[1][::10, ::10])
    assert calls == [70]


def test_in_memory_and_foreign_maps_are_left_to_numpy(tmp_path, mapped_array):
    array, values = mapped_array
    assert positional.gather(values[0]) is None
    foreign = np.memmap(tmp_path / "f.bin", np.float32, "w+", shape=(64, 64))
    assert positional.gather(foreign[::2, ::2]) is None
    assert source_of_map(positional.map_of(array)) is not None


def test_cached_rows_are_served_from_the_map(mapped_array, monkeypatch):
    array, _ = mapped_array  # just written: every page is in the page cache
    if portable.resident_pages(memoryview(positional.map_of(array)), 0, 4096) is None:
        pytest.skip("no mincore on this system: rows are always read")
    monkeypatch.setattr(positional, "_read_rows", lambda *a: pytest.fail("read although cached"))
    assert positional.gather(array[0][::7, ::3]) is None
