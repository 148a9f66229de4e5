"""``check`` of a 2 GiB .zt: digest throughput against the bare hash functions over the same bytes.

* warm: ``check`` against ``crc32c.crc32c`` / ``hashlib.sha256`` over a map of the component (page cache warm),
  and against ``openssl dgst -sha256`` of the whole file (hashlib's own engine, as a user would run it);
* cold (the file dropped from the page cache with ``POSIX_FADV_DONTNEED``, checked with mincore/fincore before
  every run): ``check`` against the cold read rate of the same bytes (sequential ``preadv``), and for sha256
  against the slower of that and hashlib's rate: the best a read-then-hash pipeline can do.
"""
from __future__ import annotations

import hashlib
import mmap
import shutil
import subprocess
import time
from pathlib import Path

import crc32c

from ztviewer.codec import open_file
from ztviewer.codec.check import check_file

from . import cold, files
from .common import best_of, result


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
        def reference() -> object:
            return _over_map(path, offset, big.nbytes, lambda v: crc32c.crc32c(v))
        goal, label = ">= 0.8", "crc32c.crc32c"
    else:
        def reference() -> object:
            return _over_map(path, offset, big.nbytes, lambda v: hashlib.sha256(v).hexdigest())
        goal, label = ">= 0.9", "hashlib.sha256"
    ours_s, ref_s = best_of(lambda: _check(path), reference, repeats=2 if quick else 5)
    size = files.fmt_size(big.nbytes)
    note = _note(path, big.nbytes, algorithm)
    rows = [result(f"check {size} .zt, {algorithm} digest vs {label}", ours_s, ref_s, goal, kind="throughput",
                   note=f"ratio = our throughput / reference; {note}", profile=lambda: _check(path))]
    if algorithm == "sha256" and shutil.which("openssl"):
        # openssl hashes the whole file (header and manifest too: a few hundred bytes more than ours)
        def tool() -> object:
            return subprocess.run(["openssl", "dgst", "-sha256", str(path)], check=True, capture_output=True)

        ours_s, tool_s = best_of(lambda: _check(path), tool, repeats=2 if quick else 3)
        rows.append(result(f"check {size} .zt, sha256 digest vs openssl dgst -sha256", ours_s, tool_s, ">= 0.9",
                           kind="throughput", note="ratio = our throughput / openssl's over the whole file "
                           "(one process each, page cache warm)"))
    elif algorithm == "sha256":
        rows.append(result(f"check {size} .zt, sha256 digest vs openssl dgst -sha256", 1.0, 1.0, "report",
                           note="openssl not installed: row not measured (the hashlib row above stands)"))
    rows.append(_cold_row(path, big.nbytes, algorithm, ref_s, quick))
    return rows


def _cold_row(path: Path, nbytes: int, algorithm: str, hash_s: float, quick: bool) -> dict:
    name = f"cold check {files.fmt_size(nbytes)} .zt, {algorithm}"
    reason = cold.why_not_cold()
    if reason is not None:
        return result(name, 1.0, 1.0, "report", note=reason)
    repeats = 2 if quick else 4   # even: each side runs first as often (the run after another read is slower)

    def read() -> float:
        return cold.cold_read_seconds(path, files.ALIGN, nbytes)

    def ours() -> float:
        cold.make_cold(path)
        start = time.perf_counter()
        _check(path)
        return time.perf_counter() - start

    # alternated (a virtual disk's rate drifts within a run: a burst allowance spent, a neighbour busy)
    times: dict[object, list[float]] = {read: [], ours: []}
    for i in range(repeats):
        for side in ((read, ours) if i % 2 == 0 else (ours, read)):
            times[side].append(side())
    read_s, ours_s = min(times[read]), min(times[ours])
    if algorithm == "sha256":
        ref_s, label = max(read_s, hash_s), "min(cold read rate, hashlib rate)"
    else:
        ref_s, label = read_s, "the cold read rate"
    return result(f"{name} vs {label}", ours_s, ref_s, ">= 0.9", kind="throughput",
                  note=f"file made cold before every run (POSIX_FADV_DONTNEED, mincore-checked); cold read "
                  f"{nbytes / read_s / 2**30:.2f} GiB/s (sequential preadv), hashlib over the warm map "
                  f"{nbytes / hash_s / 2**30:.2f} GiB/s, ours {nbytes / ours_s / 2**30:.2f} GiB/s; best of {repeats}, "
                  "the two sides alternated")


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return bench_digest(tmpdir, quick, "crc32c") + bench_digest(tmpdir, quick, "sha256")
