"""Saving and converting at copy speed: save-as of a 2 GiB file with one attribute changed, and conversion of
a 1 GiB safetensors file to zTensor v1.0 (raw), each against ``cp`` of the same file in the same run; and the
peak memory of converting a 1 GiB zstd tensor (it must stream: at most 256 MB above the process's baseline,
whatever the tensor's size).

Our side is durable (temporary file, fsync, rename, directory fsync); so the reference is ``cp`` followed by
an fsync of the copy, and plain ``cp`` (page cache only) is given in the note. Throughput ratio =
reference time / our time (higher is better).
"""
from __future__ import annotations

import json
import os
import struct
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from ztviewer.codec import open_file
from ztviewer.codec.convert import convert
from ztviewer.codec.edit import EditableDocument, SetFileAttribute
from ztviewer.codec.save import save

from . import files
from .common import best_of, result
from .probe import run_probe

SAVE_BYTES = {False: 2 << 30, True: 8 << 20}
CONVERT_BYTES = {False: 1 << 30, True: 8 << 20}


def _cp(src: Path, dst: Path, fsync: bool) -> None:
    if dst.exists():
        dst.unlink()
    subprocess.run(["cp", str(src), str(dst)], check=True)
    if fsync:
        fd = os.open(dst, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _big_zt(tmpdir: Path, size: int | None, quick: bool) -> Path:
    if size is None:
        return files.big_zt(tmpdir, quick).path
    path = tmpdir / f"save_bench_{size}.zt"
    if not path.exists():
        writer = files.ZtV10Writer(path)
        writer.add("big", "float32", [size // 4], files.random_chunks(size))
        writer.finish()
    return path


def _safetensors(tmpdir: Path, size: int) -> Path:
    """``size`` bytes of float32 in 16 tensors, written directly (not by ztviewer)."""
    path = tmpdir / f"convert_bench_{size}.safetensors"
    if path.exists():
        return path
    count = 16
    per = size // count // 4 * 4
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    for i in range(count):
        header[f"layer.{i:02d}.weight"] = {"dtype": "F32", "shape": [per // 4],
                                           "data_offsets": [i * per, (i + 1) * per]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.writelines(files.random_chunks(per * count, seed=3))
    return path


def _settle_unlinks() -> None:
    """Wait for replaced files being unlinked in the background (not part of either side's time)."""
    for thread in threading.enumerate():
        if thread.name == "ztviewer-unlink-replaced":
            thread.join()


def _cpu_of(fn) -> tuple[float, float]:
    """Wall seconds of ``fn`` and the CPU seconds it used, in this process and in the children it waited for
    (``cp``), user + system: kernel copies count on both sides."""
    import resource

    def used() -> float:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    before = used()
    seconds = fn()
    return seconds, used() - before


def bench_save_as(tmpdir: Path, quick: bool, size: int | None = None, src: Path | None = None,
                  label: str = "", goal: str = "<= 1.15") -> dict[str, Any]:
    """Save-as over an existing file of the same size vs ``cp`` + fsync to a fresh target (the reference's old copy
    is removed before its clock starts; our replaced file is freed in the background, as in the app, and that
    freeing is over before either side's clock starts)."""
    src = _big_zt(tmpdir, size, quick) if src is None else src
    out, copy = tmpdir / f"saved_as{src.suffix}", tmpdir / f"cp_copy{src.suffix}"

    def ours() -> float:
        _settle_unlinks()
        start = time.perf_counter()
        with open_file(src) as tf:
            doc = EditableDocument(tf)
            SetFileAttribute("description", "benchmark edit").apply(doc)
            save(doc, out)
        return time.perf_counter() - start

    def reference(fsync: bool = True) -> float:
        _settle_unlinks()  # our replaced file's background unlink must not land on the reference's clock
        copy.unlink(missing_ok=True)
        start = time.perf_counter()
        _cp(src, copy, fsync=fsync)
        return time.perf_counter() - start

    ours(), reference()  # warm-up; now ``out`` exists, so every timed save replaces a file
    t_ours = t_ref = cpu_ours = cpu_ref = float("inf")
    for i in range(2 if quick else 5):
        for fn in ((ours, reference) if i % 2 == 0 else (reference, ours)):
            seconds, cpu = _cpu_of(fn)
            if fn is ours:
                t_ours, cpu_ours = min(t_ours, seconds), min(cpu_ours, cpu)
            else:
                t_ref, cpu_ref = min(t_ref, seconds), min(cpu_ref, cpu)
    t_plain = reference(fsync=False)
    _settle_unlinks()
    nbytes = src.stat().st_size
    row = result(f"save-as over an existing {label}file, one attribute changed (vs cp + fsync to a fresh target)",
                 t_ours, t_ref, goal, note=f"{files.fmt_size(nbytes)}; ours {nbytes / t_ours / 2**30:.2f} GiB/s "
                 f"(temporary, fsync, rename over the old file, directory fsync; the old file is unlinked in the "
                 f"background); plain cp {t_plain:.3f} s; CPU (user + system, best) ours {cpu_ours:.3f} s, cp "
                 f"{cpu_ref:.3f} s", profile=ours)
    for f in (out, copy):
        f.unlink(missing_ok=True)
    return row


def bench_zt_to_safetensors(tmpdir: Path, quick: bool, size: int | None = None) -> dict[str, Any]:
    src = _big_zt(tmpdir, size, quick)
    out, copy = tmpdir / "converted.safetensors", tmpdir / "cp_copy.zt"

    def ours() -> None:
        convert(src, out, to="safetensors")

    t_ours, t_ref = best_of(ours, lambda: _cp(src, copy, fsync=True), repeats=2 if quick else 5)
    (_, cpu_ours), (_, cpu_ref) = _cpu_of(ours), _cpu_of(lambda: _cp(src, copy, fsync=True))
    nbytes = src.stat().st_size
    row = result("convert zt v1.0 → safetensors (vs cp + fsync)", t_ours, t_ref, "<= 1.2",
                 note=f"{files.fmt_size(nbytes)}, one tensor; {nbytes / t_ours / 2**30:.2f} GiB/s; CPU (user + "
                      f"system, one run) ours {cpu_ours:.3f} s, cp {cpu_ref:.3f} s", profile=ours)
    for f in (out, copy):
        f.unlink(missing_ok=True)
    return row


def bench_convert(tmpdir: Path, quick: bool, size: int | None = None) -> dict[str, Any]:
    src = _safetensors(tmpdir, CONVERT_BYTES[quick] if size is None else size)
    out, copy = tmpdir / "converted.zt", tmpdir / "cp_copy.safetensors"

    def ours() -> None:
        convert(src, out, to="zt")

    repeats = 2 if quick else 5
    t_ours, t_ref = best_of(ours, lambda: _cp(src, copy, fsync=True), repeats=repeats)
    _, t_plain = best_of(ours, lambda: _cp(src, copy, fsync=False), repeats=1, warmup=False)
    nbytes = src.stat().st_size
    row = result("convert safetensors → zt v1.0 raw (vs cp + fsync)", t_ours, t_ref, ">= 0.7", kind="throughput",
                 note=f"{files.fmt_size(nbytes)}, 16 tensors; {nbytes / t_ours / 2**30:.2f} GiB/s; plain cp "
                      f"{t_plain:.3f} s (ratio {t_plain / t_ours:.2f})", profile=ours)
    for f in (out, copy):
        f.unlink(missing_ok=True)
    return row


RSS_ALLOWANCE = 256 << 20
_CONVERT_CHILD = """
from ztviewer.codec.convert import convert

base = status("VmRSS")
result = convert(sys.argv[1], sys.argv[2], to="zt", compress="raw")
print(json.dumps({"base": base, "peak": status("VmHWM"), "size": result.size}))
"""


def _zstd_zt(tmpdir: Path, size: int) -> Path:
    """One float32 tensor of ``size`` bytes stored as zstd frames (a repeating ramp: ~1000:1)."""
    path = tmpdir / f"convert_zstd_{size}.zt"
    if path.exists():
        return path
    import numpy as np
    import zstandard

    compressor = zstandard.ZstdCompressor(level=1)

    def frames():
        step = 16 << 20
        for start in range(0, size, step):
            n = min(step, size - start) // 4
            yield compressor.compress((np.arange(start // 4, start // 4 + n, dtype=np.uint32) % 1000)
                                      .astype("<f4").tobytes())

    writer = files.ZtV10Writer(path)
    writer.add("big", "float32", [size // 4], frames(), encoding="zstd")
    writer.finish()
    return path


def bench_convert_zstd_rss(tmpdir: Path, quick: bool, size: int | None = None) -> dict[str, Any]:
    nbytes = CONVERT_BYTES[quick] if size is None else size
    name = f"convert of a {files.fmt_size(nbytes)} zstd tensor: peak RSS above baseline (MiB)"
    if not os.path.exists("/proc/self/status"):
        return result(name, 1.0, 1.0, "report", note="no /proc/self/status on this system: not measured")
    src, out = _zstd_zt(tmpdir, nbytes), tmpdir / "converted_zstd.zt"
    doc = run_probe(_CONVERT_CHILD, src, out, what="convert")
    out.unlink(missing_ok=True)
    growth = max(doc["peak"] - doc["base"], 1)
    return result(name, growth / 2**20, RSS_ALLOWANCE / 2**20, "<= 1.0", unit="MiB",
                  note=f"child process: peak (VmHWM) {doc['peak'] / 2**20:.0f} MiB, {doc['base'] / 2**20:.0f} MiB "
                       f"(VmRSS) before converting; {src.stat().st_size:,} stored bytes decoded to "
                       f"{doc['size']:,}; allowance 256 MB (reference column)")


def run(tmpdir: Path, quick: bool = False, size: int | None = None) -> list[dict[str, Any]]:
    """Both figures; ``size`` (bytes) overrides the input sizes (tests run it tiny).

    Each row also carries ``value`` (our seconds), ``reference`` (cp + fsync seconds) and ``ratio``
    (reference / ours, the throughput ratio compared with ``goal``).
    """
    rows = [bench_save_as(tmpdir, quick, size), bench_convert(tmpdir, quick, size),
            bench_convert_zstd_rss(tmpdir, quick, size),
            bench_save_as(tmpdir, quick, size, _safetensors(tmpdir, SAVE_BYTES[quick] if size is None else size),
                          "safetensors ", "<= 1.2"),
            bench_zt_to_safetensors(tmpdir, quick, size)]
    for row in rows:
        row["value"], row["reference"] = row["ours_s"], row["reference_s"]
    return rows
