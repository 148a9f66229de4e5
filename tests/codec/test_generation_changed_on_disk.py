"""An earlier zTensor v2 generation (read through a prefix of the file) is told changed on disk as the whole file
is, except for an append after it, which leaves its bytes whole."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tests.gui.v2_files import with_generations
from ztviewer.codec import open_file
from ztviewer.codec.errors import SourceChanged
from ztviewer.codec.file_stamps import GONE, REPLACED
from ztviewer.codec.formats.zt_v2 import find_generations
from ztviewer.codec.formats.zt_v2.reader import open_generation
from ztviewer.codec.source import InMemorySource, LocalFile

ztensor = pytest.importorskip("ztensor")
OPEN_FILES_STAY = pytest.mark.skipif(os.name == "nt", reason="Windows neither removes nor replaces an open file")


@pytest.fixture
def opened(tmp_path):
    """The file opened whole (a plain Source) and as its second generation, before the change."""
    path = with_generations(tmp_path / "gen.zt")
    with open_file(path) as tf:
        end = find_generations(tf)[0].end
    whole, second = LocalFile(path), open_generation(str(path), end)
    assert second.size == end < whole.size and second.source.changed() is None and whole.changed() is None
    yield path, whole, second
    whole.close()
    second.close()


def _append(path, name: str = "c") -> None:
    with ztensor.Writer(str(path), canonical=False, append=True) as w:
        w.add(name, np.arange(3, dtype=np.float64).tobytes(), [3], "f64")


def test_an_append_leaves_the_earlier_generation_unchanged(opened):
    path, whole, second = opened
    before = whole.size
    _append(path)
    assert whole.changed() == f"its size changed from {before:,} to {os.path.getsize(path):,} bytes"
    assert second.source.changed() is None
    second.source.require_unchanged()
    # its bytes are still read, through the map too (made after the append: only its prefix is checked)
    assert [t.name for t in second.tensors] == ["a", "b"]
    assert bytes(second.source.view(0, 8)) == whole.read(0, 8) == b"\x89ZT2\r\n\x1a\n"


def test_a_truncation_to_the_generation_end_leaves_it_whole(opened):
    path, whole, second = opened
    os.truncate(path, second.size)
    assert second.source.changed() is None
    assert whole.changed() == f"its size changed from {whole.size:,} to {second.size:,} bytes"


def test_a_truncation_below_the_generation_end_is_told_as_for_the_whole_file(opened):
    path, whole, second = opened
    os.truncate(path, second.size - 1)
    why = whole.changed()
    assert why == f"its size changed from {whole.size:,} to {second.size - 1:,} bytes"
    assert second.source.changed() == why
    with pytest.raises(SourceChanged, match="its size changed"):
        second.source.view(0, 8)          # refused before any page past the new end could be touched
    with pytest.raises(SourceChanged, match="its size changed"):
        second.source.require_unchanged()


@OPEN_FILES_STAY
def test_a_file_replaced_by_rename_is_told_as_for_the_whole_file(opened, tmp_path):
    path, whole, second = opened
    other = tmp_path / "saved-by-another.zt"
    other.write_bytes(path.read_bytes() + b"\0" * 64)       # the same bytes and more: only the identity differs
    os.replace(other, path)
    assert whole.changed() == second.source.changed() == REPLACED
    # the bytes read are still the open file's, whole: reading them goes on, only the user is told
    assert whole.bytes_changed() is None and second.source.bytes_changed() is None
    assert bytes(second.source.view(0, 8)) == b"\x89ZT2\r\n\x1a\n"


@OPEN_FILES_STAY
def test_a_removed_file_is_told_as_for_the_whole_file(opened):
    path, whole, second = opened
    os.remove(path)
    assert whole.changed() == second.source.changed() == GONE


def test_in_memory_and_closed_sources_never_change(tmp_path):
    assert InMemorySource(b"abc").changed() is None
    path = tmp_path / "f.bin"
    path.write_bytes(b"abcd")
    source = LocalFile(path)
    source.close()
    path.write_bytes(b"ab")
    assert source.changed() is None


def test_mapped_arrays_of_an_earlier_generation_outlive_an_append_not_a_truncation(tmp_path):
    """A generation opened alone owns its file: the arrays it hands out as views of the map are checked against
    its prefix (mapped_pages.require_unchanged), so an append leaves them readable and a cut below its end not."""
    from ztviewer.codec.dense import to_dense
    from ztviewer.codec.mapped_pages import map_of, require_unchanged

    path = tmp_path / "big.zt"
    with ztensor.Writer(str(path), canonical=False) as w:
        w.add("big", np.arange(1 << 20, dtype=np.float32).tobytes(), [1 << 20], "f32")
    _append(path)
    with open_file(path) as tf:
        end = find_generations(tf)[0].end
    with open_generation(str(path), end) as first:
        array = to_dense(first, first.tensor("big"), mapped=True)
        assert map_of(array) is not None
        _append(path, "d")
        require_unchanged(array)
        assert array[(1 << 20) - 1] == (1 << 20) - 1
        os.truncate(path, end - 1)
        with pytest.raises(SourceChanged, match=f"its size changed from .* to {end - 1:,} bytes"):
            require_unchanged(array)
