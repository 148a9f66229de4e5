"""The strided preview computed in the calling thread (the heatmap's first paint without a worker round trip): the
same image and level sample as the worker's preview, and only when it costs no I/O and little work."""
from __future__ import annotations

import os

import numpy as np
import pytest

from ztviewer.analysis import plane_jobs, positional
from ztviewer.analysis.mapped import ReleasingPlane
from ztviewer.analysis.plane_jobs import Inline, quick_preview, render_plane
from ztviewer.analysis.reduce import preview_grid
from ztviewer.analysis.slicing import plane
from ztviewer.codec import portable
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.mapped_pages import byte_bounds, map_of
from ztviewer.codec.source import LocalFile

SHAPE = (2, 900, 1300)
REGION = (0, 900, 0, 1300)
OUT = (200, 300)


@pytest.fixture
def mapped_array(tmp_path):
    values = np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)
    path = tmp_path / "plane.bin"
    path.write_bytes(b"\0" * 40 + values.tobytes())   # just written: in the page cache
    source = LocalFile(path)
    array = np.frombuffer(source.view(40, values.nbytes), np.float32).reshape(SHAPE)
    if portable.resident_pages(memoryview(map_of(array)), 0, 4096) is None:
        pytest.skip("no mincore on this system: previews of file maps are always read on a worker")
    yield array, values, path
    del array
    source.close()


def worker_preview(view, region=REGION, out=OUT, **kw):
    ctx = Inline()
    render_plane(ctx, view, region, out, "peak", preview=True, **kw)
    return ctx.partials[0]


@pytest.mark.parametrize("orientation", ["plain", "flipped", "transposed"])
@pytest.mark.parametrize("span", [64 << 20, 100 << 10])   # one band of rows, many
def test_same_image_and_level_sample_as_the_workers_preview(mapped_array, monkeypatch, orientation, span):
    from ztviewer.analysis import mapped

    monkeypatch.setattr(mapped, "SPAN", span)
    array, values, _ = mapped_array
    view, wanted = plane(array, (1, 2), {0: 1}), values[1]
    if orientation == "flipped":
        view, wanted = view[::-1, ::-1], wanted[::-1, ::-1]
    elif orientation == "transposed":
        view, wanted = view.T, wanted.T
    region = (0, view.shape[0], 0, view.shape[1])
    quick = quick_preview(ReleasingPlane(view), region, OUT, dtype_name="float32", request=7)
    expected = worker_preview(ReleasingPlane(view), region, dtype_name="float32")
    assert quick is not None and quick.base and quick.request == 7 and quick.method == "strided"
    np.testing.assert_array_equal(quick.image.data, expected.image.data)
    np.testing.assert_array_equal(quick.image.row_edges, expected.image.row_edges)
    np.testing.assert_array_equal(quick.image.col_edges, expected.image.col_edges)
    np.testing.assert_array_equal(quick.sample, expected.sample)
    s0, s1 = -(-view.shape[0] // OUT[0]), -(-view.shape[1] // OUT[1])
    np.testing.assert_array_equal(quick.image.data, wanted[::s0, ::s1])
    assert map_of(quick.image.data) is None and map_of(quick.sample) is None   # copies of its own


def test_presented_values_and_a_region(mapped_array):
    array, _, _ = mapped_array
    bits = array[0].view(np.uint32)
    region = (100, 700, 200, 1300)
    quick = quick_preview(ReleasingPlane(bits), region, (50, 60), dtype_name="float32")
    expected = worker_preview(ReleasingPlane(bits), region, (50, 60), dtype_name="float32")
    np.testing.assert_array_equal(quick.image.data, expected.image.data)
    np.testing.assert_array_equal(quick.sample, expected.sample)


def test_in_memory_arrays_are_previewed_here():
    values = np.random.default_rng(3).standard_normal((900, 1300)).astype(np.float32)
    quick = quick_preview(values, REGION, OUT)
    np.testing.assert_array_equal(quick.image.data, values[::5, ::5])
    np.testing.assert_array_equal(quick.sample, worker_preview(values).sample)


def test_left_to_the_worker_when_it_would_read_or_work_much(mapped_array, monkeypatch):
    array, values, _ = mapped_array
    view = ReleasingPlane(array[0])
    assert quick_preview(view, (0, 150, 0, 250), OUT) is None               # fits: the exact values instead
    assert quick_preview(object(), REGION, OUT) is None                      # computed planes (tensor trains)
    monkeypatch.setattr(plane_jobs, "QUICK_ELEMENTS", 180 * 260 - 1)
    assert quick_preview(view, REGION, OUT) is None                          # too many pixels
    monkeypatch.setattr(plane_jobs, "QUICK_ELEMENTS", 180 * 260)
    assert quick_preview(view, REGION, OUT) is not None
    monkeypatch.setattr(plane_jobs, "QUICK_SPAN", 180 * 1300 * 4)   # the 180 rows read, whole (the sample's too)
    assert quick_preview(view, REGION, OUT) is not None
    monkeypatch.setattr(plane_jobs, "QUICK_SPAN", 180 * 1300 * 4 - 1)   # rows spanning too much map
    assert quick_preview(view, REGION, OUT) is None
    monkeypatch.setattr(plane_jobs, "QUICK_SPAN", 64 << 20)
    monkeypatch.setattr(positional, "_cached", lambda *a: False)            # not in the page cache: would read
    assert quick_preview(view, REGION, OUT) is None
    assert quick_preview(values[0], REGION, OUT) is not None                 # memory: nothing to read


def test_cached_bytes_is_the_span_of_the_rows(mapped_array):
    array, values, _ = mapped_array
    span = 180 * (259 * 5 * 4 + 4)          # 180 file rows, each from its first to its last element read
    assert positional.cached_bytes(array[0][::5, ::5]) == span
    assert positional.cached_bytes(array[0].T[::5, ::5]) == span             # the same rows, transposed
    assert positional.cached_bytes(values[0][::5, ::5]) is None              # not a file map
    assert positional.cached_bytes(array[0][::5, ::1100]) is None            # elements pages apart: not rows


def test_a_changed_file_is_refused_before_reading(mapped_array):
    array, _, path = mapped_array
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))        # rewritten in place
    with pytest.raises(SourceChanged):
        quick_preview(ReleasingPlane(array[0]), REGION, OUT)


def test_the_refinement_waits_for_a_preview_shown_by_the_caller():
    """With the caller's preview and sample, the job reads no sample, emits no preview and waits (bounded) until
    the preview is painted; without them, a job that emitted no preview never waits."""
    import threading

    values = np.random.default_rng(4).standard_normal((900, 1300)).astype(np.float32)
    quick = quick_preview(values, REGION, OUT)
    shown = threading.Event()
    waited: list[bool] = []
    real_wait = shown.wait
    shown.wait = lambda timeout=None: waited.append(True) or real_wait(0)   # type: ignore[method-assign]
    ctx = Inline()
    done = render_plane(ctx, values, REGION, OUT, "peak", preview_shown=shown, sample=quick.sample)
    assert waited == [True] and ctx.partials == [] and done.sample is quick.sample and done.method == "peak"
    waited.clear()
    render_plane(Inline(), values, (0, 150, 0, 250), OUT, "peak", preview=True, preview_shown=shown)
    assert waited == []


def _mapped_kib(address: int) -> int | None:
    """Resident KiB of this process's mapping holding ``address`` (``/proc/self/smaps``), None where unknown."""
    try:
        with open("/proc/self/smaps") as smaps:
            inside = False
            for line in smaps:
                head = line.split()[0]
                if "-" in head and not head.endswith(":"):
                    low, high = (int(x, 16) for x in head.split("-"))
                    inside = low <= address < high
                elif inside and head == "Rss:":
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def test_the_workers_level_sample_leaves_nothing_of_the_map_resident(tmp_path):
    """The sample picks scattered elements (the kernel may map whole large pages around each): its pages are given
    back before the reduction starts, as the preview's are."""
    values = np.random.default_rng(8).standard_normal((2048, 4096)).astype(np.float32)
    path = tmp_path / "plane.bin"
    path.write_bytes(values.tobytes())
    source = LocalFile(path)
    try:
        array = np.frombuffer(source.view(0, values.nbytes), np.float32).reshape(values.shape)
        address = array.ctypes.data
        if _mapped_kib(address) is None:
            pytest.skip("no /proc/self/smaps on this system")
        seen: list[int | None] = []

        class Context(Inline):
            def emit_partial(self, value) -> None:
                seen.append(_mapped_kib(address))
                super().emit_partial(value)

        render_plane(Context(), ReleasingPlane(array), (0, 2048, 0, 4096), (100, 100), "max", preview=True)
        assert seen and seen[0] is not None and seen[0] <= 256, f"{seen[0]} KiB of the map still resident"
    finally:
        source.close()


@pytest.mark.parametrize("orientation", ["plain", "flipped", "transposed"])
def test_scattered_elements_are_picked_in_groups_of_nearby_pages(mapped_array, monkeypatch, orientation):
    from ztviewer.analysis import mapped

    array, values, _ = mapped_array
    view, expected = array[1], values[1]
    if orientation == "flipped":
        view, expected = view[::-1, ::-1], expected[::-1, ::-1]
    elif orientation == "transposed":
        view, expected = view.T, expected.T
    rng = np.random.default_rng(9)
    rows = rng.integers(0, view.shape[0], 5000)
    cols = rng.integers(0, view.shape[1], 5000)
    released: list[tuple[int, int]] = []
    real = mapped.release
    monkeypatch.setattr(mapped, "SPAN", 256 << 10)
    monkeypatch.setattr(mapped, "release", lambda v: released.append(v.shape) or real(v))
    np.testing.assert_array_equal(ReleasingPlane(view).pick(rows, cols), expected[rows, cols])
    assert len(released) >= 900 * 1300 * 4 // (256 << 10)   # one group (and its pages given back) per span


def test_grid_and_picks_equal_numpy_and_leave_nothing_resident(mapped_array, monkeypatch):
    from ztviewer.analysis import mapped

    monkeypatch.setattr(mapped, "SPAN", 100 << 10)
    array, values, _ = mapped_array
    rng = np.random.default_rng(12)
    rows = np.sort(rng.integers(0, 900, 3000))          # on the grid's rows or not, before and after it too
    cols = rng.integers(0, 1300, 3000)
    grid, picked = ReleasingPlane(array[1]).grid_and_picks(slice(30, 850, 7), slice(5, 1300, 3), rows, cols)
    np.testing.assert_array_equal(grid, values[1][30:850:7, 5:1300:3])
    np.testing.assert_array_equal(picked, values[1][rows, cols])
    narrow = array[1][:, 100:1200]                       # rows apart in memory: not one flat run
    grid, picked = ReleasingPlane(narrow).grid_and_picks(slice(30, 850, 7), slice(5, 1100, 3), rows, cols % 1100)
    np.testing.assert_array_equal(grid, values[1][:, 100:1200][30:850:7, 5:1100:3])
    np.testing.assert_array_equal(picked, values[1][:, 100:1200][rows, cols % 1100])
    assert ReleasingPlane(array[1].T).grid_and_picks(slice(0, 1300, 3), slice(0, 900, 7), rows, cols) is None
    kib = _mapped_kib(array.ctypes.data)
    if kib is not None:
        assert kib <= 256, f"{kib} KiB of the map still resident"
    flipped = array[1][::-1, ::-1]                       # rows run backwards in memory: so do the bands released
    released: list[tuple[int, int]] = []
    monkeypatch.setattr(mapped, "release_addresses", lambda low, high: released.append((low, high)))
    grid, picked = ReleasingPlane(flipped).grid_and_picks(slice(30, 850, 7), slice(5, 1300, 3), rows, cols)
    np.testing.assert_array_equal(grid, values[1][::-1, ::-1][30:850:7, 5:1300:3])
    np.testing.assert_array_equal(picked, values[1][::-1, ::-1][rows, cols])
    plane_low, plane_high = byte_bounds(flipped)
    assert released and all(plane_low <= low < high <= plane_high for low, high in released)
    for row in range(30, 900):                           # every row from the grid's first on: inside a released band
        low, high = byte_bounds(flipped[row])
        assert any(a <= low and high <= b for a, b in released), row


def _page_flags(array: np.ndarray) -> np.ndarray:
    mapped = memoryview(map_of(array))
    return portable.resident_pages(mapped, 0, len(mapped))[1]


@pytest.mark.parametrize(("orientation", "cached"), [("plain", "whole rows"), ("plain", "grid"),
                                                      ("transposed", "whole rows")])
def test_it_reads_no_page_that_is_not_in_the_page_cache(mapped_array, orientation, cached):
    """Only the file rows the preview reads in the page cache, whole (read alone, no read-ahead): computing the
    preview and its level sample here brings no other page of the file in (that would be disk I/O on the GUI
    thread), else it is left to the worker. A plain plane's sample lies on the preview's rows (anywhere in them,
    past its last column too), a transposed plane's on other rows of the file. ``grid``: only the bytes from the
    first to the last element of the preview's grid on each row are cached (what a worker's preview reads)."""
    array, _, path = mapped_array
    plain = orientation == "plain"
    view = array[1] if plain else array[1].T
    region = (0, view.shape[0], 0, view.shape[1])
    grid_rows, grid_cols = preview_grid(view.shape, *OUT, region)
    if cached == "grid":
        rows = positional._rows(view[grid_rows, grid_cols])
    else:
        rows = positional._rows(view[grid_rows, :] if plain else view[:, grid_cols])
    fd = os.open(path, os.O_RDWR)
    try:
        os.fsync(fd)   # clean pages can be dropped
        if not portable.advise(fd, 0, 0, "DONTNEED") or _page_flags(array).any():
            pytest.skip("the system keeps the file's pages cached")
        portable.advise(fd, 0, 0, "RANDOM")
        for offset in rows.offsets.tolist():
            os.pread(fd, rows.run, offset)
    finally:
        os.close(fd)
    before = _page_flags(array)
    quick = quick_preview(ReleasingPlane(view), region, OUT)
    if cached == "whole rows":
        assert (quick is not None) is plain
    brought_in = np.flatnonzero(_page_flags(array) & ~before)
    assert not brought_in.size, f"{brought_in.size} pages read in, e.g. page {brought_in[0]}"


def test_the_level_sample_index_of_a_shape_is_computed_once_and_cannot_be_changed():
    """Every plane of one shape (the slices of an N-D tensor, a plane shown again) shares one index, read-only."""
    from ztviewer.analysis.reduce import sample_index

    first = sample_index((5000, 7000), 1 << 16, (0, 5000, 0, 7000), 13)
    again = sample_index((5000, 7000), 1 << 16, (0, 5000, 0, 7000), 13)
    assert first is not None and again is not None and first[0] is again[0] and first[1] is again[1]
    with pytest.raises(ValueError):
        first[0][0] = 1
    other = sample_index((5000, 7000), 1 << 16, (0, 5000, 0, 7000), 7)
    assert other is not None and not np.array_equal(other[0], first[0])
