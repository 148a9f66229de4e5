"""Saving: temporary file + fsync + rename, in place over an open file, cancel / failure leave everything as
it was, progress, kernel copies and their fallbacks, digests kept for untouched blobs."""
from __future__ import annotations

import errno
import os
import stat
import struct

import cbor2
import numpy as np
import pytest

from ztviewer.codec import open_file, readahead
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.check import check_file
from ztviewer.codec.decode import dense_array
from ztviewer.codec.edit import EditableDocument, RenameTensor, SetEncoding, SetFileAttribute
from ztviewer.codec.errors import Cancelled, DamagedTensor, EditRefused
from ztviewer.codec.save import TMP_MARKER, atomic_write, edit_file, save, stale_temporaries
from ztviewer.codec.writers import output as output_module

BIG = np.arange(256 * 1024, dtype=np.float32)  # 1 MiB


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "model.zt"
    save_arrays(path, {"big": BIG, "small": np.arange(5, dtype=np.int32)}, attributes={"license": "MIT"},
                digest="crc32c")
    return path


@pytest.fixture
def plain_src(tmp_path):
    """No digests: nothing to check, so untouched blobs are copied in the kernel, unread."""
    path = tmp_path / "plain.zt"
    save_arrays(path, {"big": BIG, "small": np.arange(5, dtype=np.int32)}, attributes={"license": "MIT"})
    return path


def leftovers(directory) -> list[str]:
    return [n for n in os.listdir(directory) if TMP_MARKER in n]


def test_save_in_place_over_the_open_mapped_file(src):
    original = src.read_bytes()
    with open_file(src) as tf:
        view = dense_array(tf, tf.tensor("big"))  # a zero-copy view on the old mapping
        doc = EditableDocument(tf)
        SetFileAttribute("license", "Apache-2.0").apply(doc)
        RenameTensor("small", "tiny").apply(doc)
        save(doc)
        np.testing.assert_array_equal(view, BIG)  # the old inode stays mapped and intact
    assert src.read_bytes() != original and not leftovers(src.parent)
    with open_file(src) as tf:
        assert tf.attributes == {"license": "Apache-2.0"} and [t.name for t in tf.tensors] == ["big", "tiny"]
        np.testing.assert_array_equal(dense_array(tf, tf.tensor("big")), BIG)


def test_cancel_leaves_target_and_source_unchanged(src, monkeypatch):
    monkeypatch.setattr(output_module, "COPY_CHUNK", 4096)
    for name in ("CHUNK", "MAP_CHUNK"):  # blobs with a digest are copied through memory, checked on the way
        monkeypatch.setattr(readahead, name, 4096)
    target = src.parent / "copy.zt"
    target.write_bytes(b"previous contents")
    original = src.read_bytes()
    seen = []

    def cancelled() -> bool:
        return len(seen) > 20

    with open_file(src) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("license", "x").apply(doc)
        with pytest.raises(Cancelled):
            save(doc, target, progress=lambda done, total: seen.append(done), cancelled=cancelled)
        with pytest.raises(Cancelled):
            save(doc, progress=lambda done, total: seen.append(done), cancelled=cancelled)
    assert target.read_bytes() == b"previous contents" and src.read_bytes() == original
    assert not leftovers(src.parent)


def test_failure_midway_removes_the_temporary(plain_src, monkeypatch):
    src = plain_src
    original = src.read_bytes()
    calls = []

    def boom(self, source, offset, length):
        calls.append(length)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_module.Output, "copy_range", boom)
    with open_file(src) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("license", "x").apply(doc)
        with pytest.raises(OSError, match="No space left"):
            save(doc)
    assert calls and src.read_bytes() == original and not leftovers(src.parent)


def test_progress_reaches_the_total(src):
    seen: list[tuple[int, int]] = []
    with open_file(src) as tf:
        doc = EditableDocument(tf)
        SetEncoding("zstd", 1, tensor="big").apply(doc)
        save(doc, src.parent / "p.zt", progress=lambda d, t: seen.append((d, t)))
    done = [d for d, _ in seen]
    assert done == sorted(done) and seen[-1][0] == seen[-1][1] >= BIG.nbytes


KERNEL_CALLS = ("splice", "copy_file_range", "sendfile")


def _instrument(monkeypatch, broken: tuple[str, ...]) -> dict[str, int]:
    missing = [name for name in KERNEL_CALLS if not hasattr(os, name)]
    if missing:
        pytest.skip(f"this system has no os.{', os.'.join(missing)}")
    calls = dict.fromkeys(KERNEL_CALLS, 0)
    for name in KERNEL_CALLS:
        real = getattr(os, name)

        def wrapper(*args, _real=real, _name=name, **kw):
            calls[_name] += 1
            if _name in broken:
                raise OSError(errno.EXDEV if _name == "copy_file_range" else errno.EINVAL, "unsupported")
            return _real(*args, **kw)

        monkeypatch.setattr(os, name, wrapper)
    return calls


@pytest.mark.parametrize("broken", [(), ("copy_file_range",), ("copy_file_range", "sendfile")])
def test_kernel_copy_and_fallbacks_give_the_same_bytes(plain_src, monkeypatch, broken):
    """zt → zt keeps every offset, so the copy is page-congruent: copy_file_range, then its fallbacks."""
    src = plain_src
    calls = _instrument(monkeypatch, broken)
    out = src.parent / f"k{len(broken)}.zt"
    with open_file(src) as tf:
        save(EditableDocument(tf), out)
    assert out.read_bytes() == src.read_bytes()
    assert calls["copy_file_range"] >= 1 and calls["splice"] == 0
    assert (calls["sendfile"] >= 1) == ("copy_file_range" in broken)


def test_a_blob_with_a_digest_is_checked_then_still_copied_in_the_kernel(src, monkeypatch):
    """Checking a large untouched blob's digest reads it once; the copy itself stays in the kernel."""
    calls = _instrument(monkeypatch, ())
    out = src.parent / "checked.zt"
    with open_file(src) as tf:
        save(EditableDocument(tf), out)
    assert out.read_bytes() == src.read_bytes() and calls["copy_file_range"] >= 1


@pytest.mark.parametrize("broken", [(), ("splice",), ("splice", "copy_file_range", "sendfile")])
def test_misaligned_copies_splice_through_a_pipe(tmp_path, monkeypatch, broken):
    """safetensors → zt moves data to other offsets modulo the page size: os.splice, then the fallbacks."""
    source = tmp_path / "in.safetensors"
    arrays = {f"t{i}": np.arange(20_000 * (i + 1), dtype=np.float32) + i for i in range(3)}  # ≥ SMALL each
    save_arrays(source, arrays, to="safetensors")
    calls = _instrument(monkeypatch, broken)
    from ztviewer.codec.convert import convert

    convert(source, tmp_path / "out.zt")
    with open_file(tmp_path / "out.zt") as tf:
        for name, array in arrays.items():
            np.testing.assert_array_equal(dense_array(tf, tf.tensor(name)), array)
    assert calls["splice"] >= 1
    assert (calls["copy_file_range"] >= 1) == ("splice" in broken)


def test_small_blobs_are_gathered_into_few_writes(tmp_path, monkeypatch):
    """2,000 small tensors converted: their bytes go out in a few large writes, never one copy per tensor."""
    source = tmp_path / "many.safetensors"
    arrays = {f"t{i}": np.full(3, i, dtype=np.float32) for i in range(2000)}
    save_arrays(source, arrays, to="safetensors")
    calls = _instrument(monkeypatch, ())
    writes = []
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: writes.append(len(data)) or real_write(fd, data))
    from ztviewer.codec.convert import convert

    convert(source, tmp_path / "out.zt")
    assert calls == dict.fromkeys(KERNEL_CALLS, 0)
    assert 0 < len(writes) <= 4
    with open_file(tmp_path / "out.zt") as tf:
        assert len(tf.tensors) == 2000
        np.testing.assert_array_equal(dense_array(tf, tf.tensor("t1999")), arrays["t1999"])


def test_a_wrong_digest_refuses_the_save_and_skipping_leaves_its_tensor_out(tmp_path):
    """A wrong digest on an untouched blob is found as the blob is copied: never carried into a file that looks
    sound, never recomputed over the damaged bytes; ``skip_damaged`` writes the rest and lists it."""
    path = tmp_path / "d.zt"
    save_arrays(path, {"a": np.ones(4, np.float32), "b": np.arange(4, dtype=np.float32)}, digest="crc32c")
    data = bytearray(path.read_bytes())
    size = struct.unpack("<Q", data[-8:])[0]
    root = cbor2.loads(bytes(data[-8 - size:-8]))
    root["tensors"]["b"]["components"]["data"]["digest"] = "crc32c:0xDEADBEEF"
    manifest = cbor2.dumps(root)
    path.write_bytes(bytes(data[:-8 - size]) + manifest + struct.pack("<Q", len(manifest)))
    with open_file(path) as tf:
        old_a = tf.tensor("a").components["data"].digest
        doc = EditableDocument(tf)
        SetEncoding("zstd", 3, tensor="a").apply(doc)
        with pytest.raises(DamagedTensor, match=r"tensor 'b', component 'data', at byte \d+.*cannot be written: "
                           r"crc32c of the stored bytes .* the file records 0xDEADBEEF.*\[digest over the stored"):
            save(doc, tmp_path / "out.zt")
        assert not (tmp_path / "out.zt").exists() and not leftovers(tmp_path)
        result = save(doc, tmp_path / "out.zt", skip_damaged=True)
    assert [name for name, _ in result.skipped] == ["b"] and "0xDEADBEEF" in result.skipped[0][1]
    with open_file(tmp_path / "out.zt") as out:
        assert [t.name for t in out.tensors] == ["a"] and check_file(out).ok
        new_a = out.tensor("a").components["data"].digest
        assert new_a.startswith("crc32c:0x") and new_a != old_a


def test_permissions_are_kept_and_symlinks_followed(src, tmp_path):
    os.chmod(src, 0o640)
    link = tmp_path / "link.zt"
    link.symlink_to(src)
    edit_file(link, [SetFileAttribute("license", "BSD")])
    assert link.is_symlink() and stat.S_IMODE(os.stat(src).st_mode) == 0o640
    with open_file(src) as tf:
        assert tf.attributes == {"license": "BSD"}


def test_edit_file_to_another_path(src, tmp_path):
    before = src.read_bytes()
    result = edit_file(src, [RenameTensor("big", "weights"), SetFileAttribute("k", "v")], tmp_path / "o.zt")
    assert src.read_bytes() == before and result.format == "zt-v1.0"
    assert result.size == (tmp_path / "o.zt").stat().st_size
    with open_file(tmp_path / "o.zt") as tf:
        assert sorted(t.name for t in tf.tensors) == ["small", "weights"] and tf.attributes["k"] == "v"


def test_refused_edit_writes_nothing(src, tmp_path):
    with pytest.raises(EditRefused):
        edit_file(src, [SetFileAttribute("n", 5)], tmp_path / "never.zt")
    assert not (tmp_path / "never.zt").exists()


def test_stale_temporaries_are_recognisable(tmp_path):
    target = tmp_path / "m.zt"
    leftover = tmp_path / f".m.zt{TMP_MARKER}abcd1234"
    leftover.write_bytes(b"partial")
    (tmp_path / ".other.zt.ztviewer-tmp-1").write_bytes(b"")
    assert stale_temporaries(target) == [str(leftover)]


def test_atomic_write_keeps_target_when_producer_fails(tmp_path):
    target = tmp_path / "t.bin"
    target.write_bytes(b"old")

    def produce(out):
        out.write(b"new partial")
        raise RuntimeError("writer bug")

    with pytest.raises(RuntimeError):
        atomic_write(target, produce)
    assert target.read_bytes() == b"old" and not leftovers(tmp_path)
    assert atomic_write(target, lambda out: out.write(b"new")) == 3 and target.read_bytes() == b"new"


@pytest.mark.parametrize("name, tensor", [("zt10_digest_malformed.zt", "d_float32"),
                                          ("zt01_checksum_malformed.zt", "c_float32")])
def test_malformed_digest_is_refused_until_an_edit_replaces_it(name, tensor, tmp_path, corpus_dir):
    from ztviewer.codec.edit import SetDigest
    from ztviewer.codec.errors import UnsupportedConversion

    with open_file(corpus_dir / "hostile" / name) as tf:
        doc = EditableDocument(tf)
        refusal = f"tensor '{tensor}': cannot be written: malformed .*digest.*delete the tensor"
        with pytest.raises(UnsupportedConversion, match=refusal):
            save(doc, tmp_path / "out.zt")
        SetDigest("crc32c").apply(doc)
        save(doc, tmp_path / "out.zt")
        SetDigest(None).apply(doc)
        save(doc, tmp_path / "none.zt")
    with open_file(tmp_path / "out.zt") as out:
        assert not out.has_errors and all(
            c.digest.startswith("crc32c:0x") for t in out.tensors for c in t.components.values())
    with open_file(tmp_path / "none.zt") as out:
        assert not out.has_errors and all(c.digest is None for t in out.tensors for c in t.components.values())
