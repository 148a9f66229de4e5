"""Opening files: listing 10,000 tensors, and opening a 2 GiB file in the time and memory of a tiny one."""
from __future__ import annotations

import struct
from pathlib import Path

import cbor2

from ztviewer.codec import open_file
from ztviewer.codec.source import LocalFile

from . import files
from .common import best_of, result
from .probe import run_probe


def _open_and_list(path: Path) -> list[str]:
    tf = open_file(path)
    try:
        return tf.tensor_names()
    finally:
        tf.close()


def _sanity(path: Path, expected: int) -> str:
    """Empty when the file opened cleanly with ``expected`` tensors, else what went wrong (for the note)."""
    tf = open_file(path)
    try:
        errors = [str(p) for p in tf.all_problems() if p.is_error]
        if not tf.readable or errors or len(tf.tensors) != expected:
            return f"; NOT CLEAN: readable={tf.readable}, {len(tf.tensors)} tensors, {errors[:2]}"
        return ""
    finally:
        tf.close()


def bench_safetensors_list(tmpdir: Path, quick: bool) -> dict:
    from safetensors import safe_open

    path, n = files.many_safetensors(tmpdir, quick)

    def reference() -> list[str]:
        with safe_open(str(path), "np") as f:
            return list(f.keys())

    ours_s, ref_s = best_of(lambda: _open_and_list(path), reference, repeats=3 if quick else 9)
    return result(f"open + list {n:,}-tensor safetensors", ours_s, ref_s, "<= 1.5",
                  note=f"reference: safetensors {_st_version()} safe_open(path, 'np').keys()" + _sanity(path, n),
                  profile=lambda: _open_and_list(path))


def bench_zt_list(tmpdir: Path, quick: bool, objects: bool = False) -> dict:
    path, n, _, manifest_len = files.many_zt(tmpdir, quick, objects)
    trail = 8 if objects else 0  # the objects layout ends with the magic again

    def reference() -> dict:
        # The floor for any reader: read the footer and the manifest, decode the CBOR, nothing else.
        with open(path, "rb") as f:
            f.seek(-8 - trail, 2)
            (size,) = struct.unpack("<Q", f.read(8))
            f.seek(-8 - trail - size, 2)
            return cbor2.loads(f.read(size))

    ours_s, ref_s = best_of(lambda: _open_and_list(path), reference, repeats=3 if quick else 9)
    layout = "v1.x objects" if objects else "v1.0"
    return result(f"open + list {n:,}-tensor .zt {layout}", ours_s, ref_s, "<= 1.3",
                  note=f"reference: read footer + cbor2.loads of the {manifest_len:,}-byte manifest"
                  + _sanity(path, n), profile=lambda: _open_and_list(path))


def bench_open_big(tmpdir: Path, quick: bool) -> dict:
    big = files.big_zt(tmpdir, quick)
    tiny = files.tiny_zt(tmpdir)
    number = 20 if quick else 200
    repeats = 3 if quick else 7
    ours_s, ref_s = best_of(lambda: _open_and_list(big.path), lambda: _open_and_list(tiny),
                            repeats=repeats, number=number)
    # Context for the note: the same pair through a bare Source (open, mmap, touch head and tail, close).
    map_big, map_tiny = best_of(lambda: _bare_map(big.path), lambda: _bare_map(tiny), repeats=repeats,
                                number=number)
    return result(f"open {files.fmt_size(big.nbytes)} one-tensor .zt vs tiny", ours_s, ref_s, "<= 1.25",
                  note=f"≈1× means size-independent; per open, mean of {number}; bare mmap open/touch/close "
                  f"{map_big * 1e6:.1f} µs vs {map_tiny * 1e6:.1f} µs" + _sanity(big.path, 1),
                  profile=lambda: [_open_and_list(big.path) for _ in range(number)])


def _bare_map(path: Path) -> None:
    source = LocalFile(path)
    source.head(64)
    source.tail(64)
    source.close()


_RSS_PROBE = r"""
from ztviewer.codec import open_file
from ztviewer.codec.source import Source
from ztviewer.codec.registry import formats

for spec in formats():  # import every format module before the baseline
    spec.reader()
before = peak_kib()
tf = open_file(sys.argv[1])
names = tf.tensor_names()
after = peak_kib()
print(json.dumps({"before_kib": before, "after_kib": after, "tensors": len(names)}))
"""


def _peak_rss(path: Path) -> dict:
    return run_probe(_RSS_PROBE, path, timeout=120, what="RSS probe")


def bench_open_big_rss(tmpdir: Path, quick: bool) -> dict:
    big = files.big_zt(tmpdir, quick)
    tiny = files.tiny_zt(tmpdir)
    big_rss = min((_peak_rss(big.path) for _ in range(2)), key=lambda r: r["after_kib"] - r["before_kib"])
    tiny_rss = min((_peak_rss(tiny) for _ in range(2)), key=lambda r: r["after_kib"] - r["before_kib"])
    increase_mib = (big_rss["after_kib"] - big_rss["before_kib"]) / 1024
    tiny_increase_mib = (tiny_rss["after_kib"] - tiny_rss["before_kib"]) / 1024
    return result(f"open {files.fmt_size(big.nbytes)} .zt: peak RSS (MiB)", big_rss["after_kib"] / 1024,
                  tiny_rss["after_kib"] / 1024, "Δ <= +100 MB", unit="MiB",
                  passed=increase_mib * 1.048576 <= 100,
                  note=f"peak RSS (VmHWM) of a fresh process after open+list; increase over its own baseline "
                  f"{increase_mib:.1f} MiB (tiny file: {tiny_increase_mib:.1f} MiB); ratio = big/tiny peak")


_HUGE_PROBE = r"""
import time
from ztviewer.codec import open_file
from ztviewer.codec.registry import formats

for spec in formats():
    spec.reader()
before = peak_kib()
start = time.perf_counter()
tf = open_file(sys.argv[1])
names = tf.tensor_names()
seconds = time.perf_counter() - start
problems = [str(p) for p in tf.all_problems()]
print(json.dumps({"seconds": seconds, "before_kib": before, "after_kib": peak_kib(), "tensors": len(names),
                  "problems": problems[:2]}))
"""


def bench_million_list(tmpdir: Path, quick: bool) -> dict:
    """1,000,000 tensors listed within 3 s and 1 GB (issue 15): a fresh process each time, its peak RSS
    (VmHWM) over its own baseline after import. The ratio is against the 3 s budget."""
    path, n = files.million_safetensors(tmpdir, quick)
    runs = [run_probe(_HUGE_PROBE, path, timeout=600) for _ in range(2 if quick else 3)]
    best = min(runs, key=lambda r: r["seconds"])
    grown_mb = max((r["after_kib"] - r["before_kib"]) * 1024 / 1e6 for r in runs)
    budget = 3.0 if not quick else 3.0 * n / 1_000_000
    clean = best["tensors"] == n and not best["problems"]
    return result(f"open + list {n:,}-tensor safetensors (time / budget)", best["seconds"], budget, "<= 1.0",
                  passed=best["seconds"] <= budget and grown_mb <= 1000 and clean,
                  note=f"budget {budget:g} s and 1 GB; peak RSS grew {grown_mb:,.0f} MB (worst of {len(runs)} "
                  f"fresh processes); {files.fmt_size(path.stat().st_size)} file"
                  + ("" if clean else f"; NOT CLEAN: {best['tensors']} tensors, {best['problems']}"))


def _st_version() -> str:
    import safetensors

    return safetensors.__version__


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return [
        bench_safetensors_list(tmpdir, quick),
        bench_zt_list(tmpdir, quick),
        bench_zt_list(tmpdir, quick, objects=True),
        bench_million_list(tmpdir, quick),
        bench_open_big(tmpdir, quick),
        bench_open_big_rss(tmpdir, quick),
    ]
