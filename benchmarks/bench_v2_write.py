"""Writing zTensor v2: a metadata edit of a 4 GiB v2 file saved over itself (an appended generation) against
``cp`` + fsync of the same file, and safetensors → v2 canonical conversion against ``ztensor.convert`` of
ztensor 2.1.2 (which writes the very same bytes), both measured in the same run.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import xxhash

from ztviewer.codec import open_file
from ztviewer.codec.convert import convert
from ztviewer.codec.edit import EditableDocument, SetFileAttribute
from ztviewer.codec.save import save
from ztviewer.codec.writers.cbor import dumps_deterministic
from ztviewer.codec.writers.zt_v2 import footer
from ztviewer.codec.writers.zt_v2_rules import ALIGN_CANONICAL, MAGIC

from . import files
from .bench_save import _safetensors
from .common import best_of, result

EDIT_BYTES = {False: 4 << 30, True: 8 << 20}
CONVERT_BYTES = {False: 1 << 30, True: 8 << 20}


def _big_v2(tmpdir: Path, size: int) -> Path:
    """A canonical v2 file with one ``size``-byte float32 part of random data, written directly."""
    path = tmpdir / f"v2_edit_bench_{size}.zt"
    hasher = xxhash.xxh3_64()
    with open(path, "wb") as f:
        f.write(MAGIC + bytes(ALIGN_CANONICAL - len(MAGIC)))
        for chunk in files.random_chunks(size, seed=5):
            hasher.update(chunk)
            f.write(chunk)
        manifest_at = -(-(ALIGN_CANONICAL + size) // ALIGN_CANONICAL) * ALIGN_CANONICAL
        f.write(bytes(manifest_at - ALIGN_CANONICAL - size))
        manifest = dumps_deterministic({"objects": {"big": {
            "shape": [size // 4], "layout": "dense",
            "parts": {"data": {"dtype": "f32", "blob": [ALIGN_CANONICAL, size],
                               "digest": f"xxh3:{hasher.intdigest():016x}"}}}}})
        f.write(manifest + footer(manifest_at, manifest))
    return path


def _cp(src: Path, dst: Path) -> None:
    dst.unlink(missing_ok=True)
    subprocess.run(["cp", str(src), str(dst)], check=True)
    fd = os.open(dst, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def bench_edit(tmpdir: Path, quick: bool, size: int | None = None) -> dict[str, Any]:
    nbytes = EDIT_BYTES[quick] if size is None else size
    src = _big_v2(tmpdir, nbytes)
    copy = tmpdir / "v2_cp_copy.zt"
    counter = iter(range(1 << 30))

    def ours() -> None:
        with open_file(src) as tf:
            doc = EditableDocument(tf)
            SetFileAttribute("description", f"edit {next(counter)}").apply(doc)
            save(doc)

    repeats = 2 if quick else 3
    t_ours, t_ref = best_of(ours, lambda: _cp(src, copy), repeats=repeats)
    grown = src.stat().st_size - nbytes
    row = result("v2 metadata edit saved in place, appended generation (vs cp + fsync)", t_ours, t_ref, "<= 0.05",
                 note=f"{files.fmt_size(nbytes)} part; open + edit + journaled append + fsync; file grew "
                      f"{files.fmt_size(grown)} over {repeats + 1} saves", profile=ours)
    copy.unlink(missing_ok=True)
    src.unlink(missing_ok=True)
    return row


def bench_convert(tmpdir: Path, quick: bool, size: int | None = None) -> dict[str, Any]:
    import ztensor

    src = _safetensors(tmpdir, CONVERT_BYTES[quick] if size is None else size)
    out, theirs = tmpdir / "v2_ours.zt", tmpdir / "v2_theirs.zt"

    def ours() -> None:
        convert(src, out, to="zt-v2")

    def reference() -> None:
        ztensor.convert(str(src), str(theirs))

    repeats = 2 if quick else 3
    t_ours, t_ref = best_of(ours, reference, repeats=repeats)
    same = out.read_bytes() == theirs.read_bytes() if src.stat().st_size <= 64 << 20 else \
        _same_file(out, theirs)
    nbytes = src.stat().st_size
    row = result("convert safetensors → zt v2 canonical (vs ztensor.convert 2.1.2)", t_ours, t_ref, "<= 1.5",
                 note=f"{files.fmt_size(nbytes)}, 16 tensors; {nbytes / t_ours / 2**30:.2f} GiB/s; output "
                      f"{'byte-identical' if same else 'DIFFERS'}", passed=None if same else False, profile=ours)
    for f in (out, theirs):
        f.unlink(missing_ok=True)
    return row


def _same_file(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(16 << 20), fb.read(16 << 20)
            if x != y:
                return False
            if not x:
                return True


def run(tmpdir: Path, quick: bool = False, size: int | None = None) -> list[dict[str, Any]]:
    """Both rows; ``size`` (bytes) overrides the input sizes (tests run it tiny)."""
    rows = [bench_edit(tmpdir, quick, size), bench_convert(tmpdir, quick, size)]
    for row in rows:
        row["value"], row["reference"] = row["ours_s"], row["reference_s"]
    return rows
