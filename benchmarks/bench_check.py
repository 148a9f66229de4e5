"""``check`` of a 2 GiB .zt: digest throughput against the bare hash functions over the same map."""
from __future__ import annotations

import hashlib
import mmap
import shutil
import subprocess
from pathlib import Path

import crc32c

from ztviewer.codec import open_file
from ztviewer.codec.check import check_file

from . import files
from .common import best_of, result, timed


def _check(path: Path) -> tuple[bool, int]:
    tf = open_file(path)
    try:
        report = check_file(tf)
        return report.ok, report.digests_verified
    finally:
        tf.close()


def _over_map(path: Path, offset: int, length: int, fn) -> object:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        try:
            return fn(view[offset:offset + length])
        finally:
            view.release()


def _note(path: Path, nbytes: int, algorithm: str) -> str:
    ok, verified = _check(path)
    text = f"{files.fmt_size(nbytes)} in one component, page cache warm"
    if not ok or verified != 1:
        text += f"; CHECK FAILED: ok={ok}, {verified} digests verified"
    return text


def bench_digest(tmpdir: Path, quick: bool, algorithm: str) -> list[dict]:
    big = files.big_zt(tmpdir, quick)
    path = big.use_digest(algorithm)
    offset = files.ALIGN
    if algorithm == "crc32c":
        reference = lambda: _over_map(path, offset, big.nbytes, lambda v: crc32c.crc32c(v))
        goal, label = ">= 0.8", "crc32c.crc32c"
    else:
        reference = lambda: _over_map(path, offset, big.nbytes, lambda v: hashlib.sha256(v).hexdigest())
        goal, label = ">= 0.9", "hashlib.sha256"
    ours_s, ref_s = best_of(lambda: _check(path), reference, repeats=2 if quick else 5)
    size = files.fmt_size(big.nbytes)
    note = _note(path, big.nbytes, algorithm)
    rows = [result(f"check {size} .zt, {algorithm} digest vs {label}", ours_s, ref_s, goal, kind="throughput",
                   note=f"ratio = our throughput / reference; {note}", profile=lambda: _check(path))]
    if algorithm == "sha256" and shutil.which("sha256sum"):
        # Report only, timed once: coreutils reads the whole file (header and manifest too) with read(2).
        tool_s = timed(lambda: subprocess.run(["sha256sum", str(path)], check=True, capture_output=True))
        rows.append(result(f"check {size} .zt, sha256 digest vs sha256sum", ours_s, tool_s, "report",
                           kind="throughput", note="report only: coreutils sha256sum over the whole file, "
                           "one run; ours = the best time of the row above"))
    return rows


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return bench_digest(tmpdir, quick, "crc32c") + bench_digest(tmpdir, quick, "sha256")
