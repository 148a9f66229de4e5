"""The stand-ins for POSIX-only calls (``ztviewer.codec.portable``) and the code paths that use them: reads
without ``os.pread``, copies without the kernel calls, and saving over the open file where the system will not
replace an open or mapped file (Windows)."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from tests._no_posix import hidden_posix_calls
from tests._windows_replace import held_by_this_process, refuse_replacing_open_files
from ztviewer.codec import open_file, portable
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import dense_array
from ztviewer.codec.edit import EditableDocument, RenameTensor, SetFileAttribute
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.save import TMP_MARKER, save
from ztviewer.codec.source import LocalFile
from ztviewer.codec.writers import output as output_module

BIG = np.arange(64 * 1024, dtype=np.float32)


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "model.zt"
    save_arrays(path, {"big": BIG, "small": np.arange(5, dtype=np.int32)}, digest="crc32c")
    return path


def test_pread_without_os_pread_seeks_and_reads_under_the_lock(tmp_path):
    path = tmp_path / "bytes.bin"
    path.write_bytes(bytes(range(256)) * 64)
    lock = threading.Lock()
    with open(path, "rb") as file, hidden_posix_calls():
        assert not hasattr(os, "pread")
        assert portable.pread(file.fileno(), 5, 300, lock) == bytes([44, 45, 46, 47, 48])
        assert portable.pread(file.fileno(), 10, len(path.read_bytes()) - 3, lock) == bytes([253, 254, 255])
        lock.acquire()
        reader = threading.Thread(target=portable.pread, args=(file.fileno(), 1, 0, lock))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive()  # waits for the lock: no seek can slip between another reader's seek and read
        lock.release()
        reader.join()


def test_source_reads_without_os_pread(src):
    data = src.read_bytes()
    with hidden_posix_calls(), LocalFile(src) as source:
        assert source.head(16) == data[:16] and source.tail(9) == data[-9:]
        assert source.read(100, 33) == data[100:133] and source.window(len(data) - 4, 50) == data[-4:]
        assert source._map is None  # small reads did not map the file


def test_copies_go_through_the_map_without_kernel_calls(tmp_path, monkeypatch):
    """safetensors → zt moves blobs to offsets of another page phase (splice), zt → zt to the same (copy_file_range):
    without either, and without fcntl, both copy through the map, byte for byte."""
    monkeypatch.setattr(output_module, "COPY_CHUNK", 4096)
    arrays = {f"t{i}": np.arange(3000 * (i + 1), dtype=np.float32) - i for i in range(3)}
    save_arrays(tmp_path / "in.safetensors", arrays, to="safetensors")
    with hidden_posix_calls():
        convert(tmp_path / "in.safetensors", tmp_path / "out.zt")
        convert(tmp_path / "out.zt", tmp_path / "again.zt")
    assert (tmp_path / "again.zt").read_bytes() == (tmp_path / "out.zt").read_bytes()
    with open_file(tmp_path / "again.zt") as tf:
        for name, array in arrays.items():
            np.testing.assert_array_equal(dense_array(tf, tf.tensor(name)), array)


def test_enlarge_pipe_without_fcntl_keeps_the_pipe_usable():
    r, w = os.pipe()
    try:
        with hidden_posix_calls():
            portable.enlarge_pipe(w, 1 << 20)
        os.write(w, b"ok")
        assert os.read(r, 2) == b"ok"
    finally:
        os.close(r)
        os.close(w)


def test_simulated_windows_refuses_to_replace_an_open_file(tmp_path, monkeypatch):
    """The simulation the next tests rely on: it really refuses while the file is open, and only then."""
    target, other = tmp_path / "t", tmp_path / "o"
    target.write_bytes(b"1")
    refused = refuse_replacing_open_files(monkeypatch)
    with open(target, "rb"):
        other.write_bytes(b"2")
        with pytest.raises(PermissionError):
            os.replace(other, target)
    os.replace(other, target)
    assert refused == [str(target)] and target.read_bytes() == b"2"


def test_save_in_place_releases_the_open_file_where_it_cannot_be_replaced(src, monkeypatch):
    refused = refuse_replacing_open_files(monkeypatch)
    with open_file(src) as tf:
        before = dense_array(tf, tf.tensor("big")).copy()
        assert held_by_this_process(str(src))
        doc = EditableDocument(tf)
        RenameTensor("small", "tiny").apply(doc)
        save(doc)
        assert refused == [os.path.realpath(src)]  # the first attempt met the open file; the second succeeded
        assert not held_by_this_process(str(src))
    np.testing.assert_array_equal(before, BIG)
    assert not [n for n in os.listdir(src.parent) if TMP_MARKER in n]
    with open_file(src) as tf:
        assert [t.name for t in tf.tensors] == ["big", "tiny"]
        np.testing.assert_array_equal(dense_array(tf, tf.tensor("big")), BIG)


def test_a_released_source_opens_again_and_notices_a_new_size(src, monkeypatch):
    refuse_replacing_open_files(monkeypatch)
    with open_file(src) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("note", "x" * 100).apply(doc)  # the saved file is longer
        save(doc)
        with pytest.raises(SourceChanged, match="changed on disk"):
            tf.source.read(0, 8)
    same = src.parent / "same.zt"
    save_arrays(same, {"a": np.arange(4, dtype=np.int32)})
    with LocalFile(same) as source:
        head = source.read(0, 8)
        source.release()
        assert not held_by_this_process(str(same))
        assert source.read(0, 8) == head  # same size: read again from the path


def test_saving_over_a_file_still_viewed_fails_cleanly_where_it_cannot_be_replaced(src, monkeypatch):
    """A zero-copy view keeps the map alive: the replace is refused twice, the target and the view stay intact."""
    refuse_replacing_open_files(monkeypatch)
    original = src.read_bytes()
    with open_file(src) as tf:
        view = dense_array(tf, tf.tensor("big"), mapped=True)
        doc = EditableDocument(tf)
        RenameTensor("small", "tiny").apply(doc)
        with pytest.raises(PermissionError):
            save(doc)
        np.testing.assert_array_equal(view, BIG)
    del view
    assert src.read_bytes() == original
    assert not [n for n in os.listdir(src.parent) if TMP_MARKER in n]


def test_all_resident_agrees_with_the_page_flags_of_every_span(tmp_path, monkeypatch):
    path = tmp_path / "pages.bin"
    page = 4096
    path.write_bytes(os.urandom(64 * page))
    spans = [0, 5 * page + 100, 40 * page - 7]
    source = LocalFile(path)
    try:
        view = source.view(0, 64 * page)
        if portable.resident_pages(view, 0, page) is None:
            assert portable.all_resident(view, spans, page) is None    # no mincore: cannot tell, as resident_pages
            return
        assert portable.all_resident(view, spans, 3 * page) is True    # just written: in the page cache
        with open(path, "rb+") as file:
            os.fsync(file.fileno())   # clean pages can be dropped
            if not portable.advise(file.fileno(), 0, 0, "DONTNEED"):
                return
        flags = portable.resident_pages(view, 0, 64 * page)[1]
        if flags.all():
            pytest.skip("the system kept the pages cached")
        expected = all(portable.resident_pages(view, o, 3 * page)[1].all() for o in spans)
        assert portable.all_resident(view, spans, 3 * page) is expected is False
        path.read_bytes()
        assert portable.all_resident(view, spans, 3 * page) is True
        monkeypatch.setattr(portable, "_MINCORE", False)
        assert portable.all_resident(view, spans, 3 * page) is None
    finally:
        source.close()
