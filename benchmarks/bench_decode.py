"""zstd decoding of one large tensor against python-zstandard, and zstd → raw conversion against the ``zstd``
command line tool decompressing the same frames.

* decode: ``decode.component_bytes`` against ``stream_reader(...).readinto`` over the same stored frames into a
  freshly allocated buffer of the decoded size (what both sides hand back: a new array). A second row,
  report only, gives the reference decoding into one buffer reused across repeats (no page faults).
* conversion: ``convert(..., compress="raw")`` of the .zt file (durable: fsync) against ``zstd -d`` of a .zst
  file holding the same frames followed by an fsync of its output. Skipped where the CLI is absent.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import zstandard

from ztviewer.codec import open_file
from ztviewer.codec.convert import convert
from ztviewer.codec.decode import component_bytes

from . import files
from .common import best_of, result


def _readinto_all(dctx: zstandard.ZstdDecompressor, stored: memoryview, target: memoryview) -> int:
    pos = 0
    with dctx.stream_reader(stored, read_across_frames=True) as reader:
        while pos < len(target):
            n = reader.readinto(target[pos:])
            if not n:
                break
            pos += n
    return pos


def bench_zstd(tmpdir: Path, quick: bool) -> list[dict]:
    z = files.zstd_zt(tmpdir, quick)
    tf = open_file(z.path)  # kept open by the profile callable; released with the result row
    tensor = tf.tensors[0]
    component = tensor.components["data"]
    stored = tf.source.view(z.offset, z.stored)
    reused = bytearray(z.nbytes)
    dctx = zstandard.ZstdDecompressor()

    def ours() -> memoryview:
        return component_bytes(tf, tensor, component)

    def reference() -> int:
        return _readinto_all(dctx, stored, memoryview(np.empty(z.nbytes, dtype=np.uint8)))

    def reference_reused() -> int:
        return _readinto_all(dctx, stored, memoryview(reused))

    note = ""
    got = ours()
    if len(got) != z.nbytes or reference_reused() != z.nbytes or bytes(got[:4096]) != bytes(reused[:4096]) \
            or bytes(got[-4096:]) != bytes(reused[-4096:]):
        note = "; DECODED BYTES DIFFER"
    del got
    repeats = 3 if quick else 7
    ours_s, ref_s = best_of(ours, reference, repeats=repeats, warmup=False)
    ours2_s, reused_s = best_of(ours, reference_reused, repeats=repeats, warmup=False)
    where = f"stored {files.fmt_size(z.stored)} ({z.stored / z.nbytes:.2f}×), one frame without content size"
    size = files.fmt_size(z.nbytes)
    return [
        result(f"zstd decode {size} tensor vs stream_reader.readinto (new buffer)", ours_s, ref_s, ">= 0.95",
               kind="throughput", note=f"ours: decode.component_bytes (positional reads of the stored bytes); "
               f"reference: readinto from the map into np.empty of the decoded size; {where}" + note, profile=ours),
        result(f"zstd decode {size} tensor vs readinto into a reused buffer", ours2_s, reused_s, "report",
               kind="throughput", note="reference's output buffer allocated once and already faulted in (ours "
               "allocates the array it returns)"),
    ]


def bench_zstd_to_raw(tmpdir: Path, quick: bool) -> dict:
    z = files.zstd_zt(tmpdir, quick)
    name = f"convert zstd → raw .zt {files.fmt_size(z.nbytes)} vs zstd -d + fsync"
    cli = shutil.which("zstd")
    if cli is None:
        return result(name, 1.0, 1.0, "report", passed=None, note="skipped: zstd CLI not installed")
    frames, plain, out = tmpdir / "frames.zst", tmpdir / "frames.raw", tmpdir / "zstd_to_raw.zt"
    with open(z.path, "rb") as src, open(frames, "wb") as dst:
        src.seek(z.offset)
        dst.write(src.read(z.stored))

    def ours() -> None:
        convert(z.path, out, to="zt", compress="raw")

    def reference() -> None:
        subprocess.run([cli, "-d", "-q", "-f", str(frames), "-o", str(plain)], check=True)
        fd = os.open(plain, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    ours_s, ref_s = best_of(ours, reference, repeats=2 if quick else 5)
    note = f"{files.fmt_size(z.stored)} of frames; output {files.fmt_size(out.stat().st_size)} (ours) and " \
           f"{files.fmt_size(plain.stat().st_size)} (zstd -d); both fsynced"
    for f in (frames, plain, out):
        f.unlink(missing_ok=True)
    return result(name, ours_s, ref_s, "<= 1.2", note=note, profile=ours)


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return [*bench_zstd(tmpdir, quick), bench_zstd_to_raw(tmpdir, quick)]
