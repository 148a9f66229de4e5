"""Reading zTensor v2: open + list a 10,000-object file against a bare ``cbor2.loads`` of its manifest (with
``ztensor.open(path).keys()`` of ztensor 2.1.2 reported beside it), xxh3 verification of a large part against
the ``xxhash`` library over the same map, and random access to one frame of a 4 GiB zstd-seekable part.
"""
from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

import numpy as np
import xxhash
import zstandard

from ztviewer.codec import open_file
from ztviewer.codec.decode import read_range
from ztviewer.codec.digest import verify_component
from ztviewer.codec.formats.zt_v2.cbor_check import encode_deterministic

from . import files
from .common import best_of, result, timed

MAGIC = b"\x89ZT2\r\n\x1a\n"
VERIFY_BYTES = {False: 1 << 30, True: 8 << 20}
SEEKABLE_BYTES = {False: 4 << 30, True: 64 << 20}
FRAME = 1 << 20


def _finish(f: Any, position: int, manifest: dict[str, Any]) -> None:
    """Pad to 4 KiB, write the manifest and the footer."""
    at = -(-position // 4096) * 4096
    f.write(bytes(at - position))
    raw = encode_deterministic(manifest)
    f.write(raw + struct.pack("<QQQII", at, len(raw), xxhash.xxh3_64_intdigest(raw), 2, 0) + MAGIC)


def _many(tmpdir: Path, quick: bool) -> tuple[Path, int, int]:
    """10,000 (500) small objects of mixed dtypes and distinct contents, as ztensor 2.1.2 writes them."""
    import ztensor

    n = files.MANY_TENSORS[quick]
    path = tmpdir / "many_v2.zt"
    dtypes = [("f32", 4), ("f16", 2), ("i64", 8), ("u8", 1), ("bf16", 2)]
    rng = np.random.default_rng(3)  # random contents: no two blobs are identical, none is shared
    with ztensor.Writer(str(path), canonical=False, align=4096) as w:
        for i in range(n):
            name, width = dtypes[i % len(dtypes)]
            data = rng.integers(0, 256, 6 * width, dtype=np.uint8).tobytes()
            w.add(f"model.layers.{i // 10:04d}.block_{i % 10}.weight", data, [2, 3], name)
    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(size - 40)
        offset, length = struct.unpack("<QQ", f.read(16))
    return path, offset, length


def _open_and_list(path: Path) -> list[str]:
    with open_file(path) as tf:
        return tf.tensor_names()


def bench_list(tmpdir: Path, quick: bool) -> dict[str, Any]:
    import cbor2
    import ztensor

    path, _offset, length = _many(tmpdir, quick)

    def reference() -> Any:
        with open(path, "rb") as f:
            f.seek(-40, 2)
            at, size = struct.unpack("<QQ", f.read(16))
            f.seek(at)
            return cbor2.loads(f.read(size))

    repeats = 3 if quick else 9
    ours_s, ref_s = best_of(lambda: _open_and_list(path), reference, repeats=repeats)
    theirs = min(timed(lambda: ztensor.open(str(path)).keys()) for _ in range(repeats))
    with open_file(path) as tf:
        clean = tf.readable and not any(p.is_error for p in tf.all_problems())
        count = len(tf.tensors)
    return result(f"open + list {count:,}-object .zt v2", ours_s, ref_s, "<= 1.3",
                  note=f"reference: footer + cbor2.loads of the {length:,}-byte manifest; ztensor.open(path).keys() "
                       f"{theirs * 1e3:.1f} ms ({theirs / ref_s:.2f}× the reference)"
                       + ("" if clean else "; NOT CLEAN"), profile=lambda: _open_and_list(path))


def _big_raw(tmpdir: Path, nbytes: int) -> Path:
    path = tmpdir / f"v2_verify_{nbytes}.zt"
    hasher = xxhash.xxh3_64()
    with open(path, "wb") as f:
        f.write(MAGIC + bytes(4096 - len(MAGIC)))
        for chunk in files.random_chunks(nbytes, seed=11):
            hasher.update(chunk)
            f.write(chunk)
        _finish(f, 4096 + nbytes, {"objects": {"big": {"shape": [nbytes // 4], "layout": "dense", "parts": {
            "data": {"dtype": "f32", "blob": [4096, nbytes], "digest": f"xxh3:{hasher.intdigest():016x}"}}}}})
    return path


def bench_verify(tmpdir: Path, quick: bool) -> dict[str, Any]:
    nbytes = VERIFY_BYTES[quick]
    path = _big_raw(tmpdir, nbytes)

    def ours() -> None:
        with open_file(path) as tf:
            tensor = tf.tensors[0]
            component = tensor.components["data"]
            verify_component(tf.source_for(tensor, component), tensor, component)

    def reference() -> str:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            view = memoryview(m)
            try:
                hasher = xxhash.xxh3_64()
                for start in range(4096, 4096 + nbytes, 8 << 20):
                    hasher.update(view[start:min(start + (8 << 20), 4096 + nbytes)])
                return hasher.hexdigest()
            finally:
                view.release()

    ours_s, ref_s = best_of(ours, reference, repeats=2 if quick else 5)
    row = result(f"verify {files.fmt_size(nbytes)} v2 part, xxh3 vs xxhash.xxh3_64", ours_s, ref_s, ">= 0.8",
                 kind="throughput", note="ratio = our throughput / reference over the same map; "
                 f"{nbytes / ours_s / 2**30:.2f} GiB/s", profile=ours)
    path.unlink(missing_ok=True)
    return row


def _big_seekable(tmpdir: Path, nbytes: int) -> Path:
    """One ``nbytes`` part in 1 MiB frames (the same frame repeated: cheap to write, real to read)."""
    block = (np.arange(FRAME // 4, dtype=np.uint32) * 2654435761).astype(np.uint32).tobytes()
    frame = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress(block)
    count = nbytes // FRAME
    table = struct.pack("<II", len(frame), FRAME) * count + struct.pack("<IBI", count, 0, 0x8F92EAB1)
    stored = len(frame) * count + 8 + len(table)
    path = tmpdir / f"v2_seekable_{nbytes}.zt"
    with open(path, "wb") as f:
        f.write(MAGIC + bytes(4096 - len(MAGIC)))
        f.writelines(frame for _ in range(count))
        f.write(struct.pack("<II", 0x184D2A5E, len(table)) + table)
        _finish(f, 4096 + stored, {"objects": {"big": {"shape": [nbytes // 4], "layout": "dense", "parts": {
            "data": {"dtype": "u32", "blob": [4096, stored], "encoding": "zt.zstd-seekable/1",
                     "decoded_length": nbytes}}}}})
    return path


def bench_random_access(tmpdir: Path, quick: bool) -> dict[str, Any]:
    nbytes = SEEKABLE_BYTES[quick]
    path = _big_seekable(tmpdir, nbytes)
    tf = open_file(path)
    tensor = tf.tensors[0]
    component = tensor.components["data"]
    middle = nbytes // 2 + 12_345

    def ours() -> bytes:
        return read_range(tf, tensor, component, middle, 64 << 10)

    number = 5 if quick else 20
    ours_s = min(timed(ours, number) for _ in range(3))
    tf.close()
    row = result(f"random access: 64 KiB inside one frame of a {files.fmt_size(nbytes)} zstd-seekable part", ours_s,
                 0.05, "<= 1.0", note="reference = the 50 ms goal; per read, mean of "
                 f"{number}: seek table parsed, one 1 MiB frame decompressed", profile=ours)
    path.unlink(missing_ok=True)
    return row


def run(tmpdir: Path, quick: bool = False) -> list[dict[str, Any]]:
    return [bench_list(tmpdir, quick), bench_verify(tmpdir, quick), bench_random_access(tmpdir, quick)]
