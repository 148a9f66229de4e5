"""zstd decoding of one large tensor against python-zstandard decoding straight into a preallocated buffer."""
from __future__ import annotations

from pathlib import Path

import zstandard

from ztviewer.codec import open_file
from ztviewer.codec.decode import component_bytes

from . import files
from .common import best_of, result


def bench_zstd(tmpdir: Path, quick: bool) -> dict:
    z = files.zstd_zt(tmpdir, quick)
    tf = open_file(z.path)  # kept open by the profile callable; released with the result row
    tensor = tf.tensors[0]
    component = tensor.components["data"]
    stored = tf.source.view(z.offset, z.stored)
    out = bytearray(z.nbytes)
    dctx = zstandard.ZstdDecompressor()

    def ours() -> memoryview:
        return component_bytes(tf, tensor, component)

    def reference() -> int:
        target = memoryview(out)
        pos = 0
        with dctx.stream_reader(stored, read_across_frames=True) as reader:
            while pos < len(target):
                n = reader.readinto(target[pos:])
                if not n:
                    break
                pos += n
        return pos

    note = ""
    got = ours()
    if len(got) != z.nbytes or reference() != z.nbytes or bytes(got[:4096]) != bytes(out[:4096]):
        note = "; DECODED BYTES DIFFER"
    del got
    ours_s, ref_s = best_of(ours, reference, repeats=3 if quick else 5, warmup=False)
    return result(f"zstd decode {files.fmt_size(z.nbytes)} tensor vs stream_reader.readinto", ours_s, ref_s,
                  ">= 0.9", kind="throughput",
                  note=f"ours: decode.component_bytes; stored {files.fmt_size(z.stored)} "
                  f"({z.stored / z.nbytes:.2f}×), one frame without content size" + note,
                  profile=ours)


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return [bench_zstd(tmpdir, quick)]
