"""Comparing checkpoints (``ztviewer.analysis.diff``) against references measured in the same run.

* two identical 2 GiB files (8 MiB with ``--quick``): our whole diff (open, pair, stored-bytes check)
  against ``cmp`` of the same two files;
* difference statistics of two 1 GiB float32 tensors (8 MiB): ours against a chunked numpy loop over
  memory maps computing the same numbers (max |Δ| and where, mean |Δ|, L2 norms, dot product, differing
  count, max ULP) the straightforward way;
* peak RSS of both diffs above the baseline after opening the files, in a child process;
* pairing two 1,000-shard (200) Hugging Face checkpoints against opening both.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ztviewer.analysis.diff import DiffOptions, Verdict, compare_files, pair_tensors
from ztviewer.codec.multifile import open_path

from .bench_multifile import SHARDS, _hf_checkpoint
from .common import best_of, result
from .files import CHUNK, ZtV10Writer, big_zt, fmt_size
from .probe import run_probe

STATS_BYTES = {False: 1 << 30, True: 8 << 20}
RSS_ALLOWANCE = 256 << 20
BLOCK = 1 << 20


def _identical_pair(tmpdir: Path, quick: bool) -> tuple[Path, Path, int]:
    big = big_zt(tmpdir, quick)
    copy = tmpdir / "diff_big_copy.zt"
    if not copy.exists():
        shutil.copyfile(big.path, copy)
    return big.path, copy, big.nbytes


def _normal_chunks(total: int, seed: int, noise: float) -> Iterator[memoryview]:
    """Normal float32 samples (the same for one ``seed``), plus normal noise of scale ``noise``."""
    rng, noise_rng = np.random.default_rng(seed), np.random.default_rng(seed + 1)
    for start in range(0, total, CHUNK):
        values = rng.standard_normal(min(CHUNK, total - start) // 4, dtype=np.float32)
        if noise:
            values += noise_rng.standard_normal(values.size, dtype=np.float32) * np.float32(noise)
        yield memoryview(values.view(np.uint8))


def _stats_pair(tmpdir: Path, quick: bool) -> tuple[Path, Path, int]:
    nbytes = STATS_BYTES[quick]
    paths = []
    for name, noise in (("diff_stats_a.zt", 0.0), ("diff_stats_b.zt", 1e-3)):
        path = tmpdir / name
        if not path.exists():
            writer = ZtV10Writer(path)
            writer.add("w", "float32", [nbytes // 4 // 4096, 4096], _normal_chunks(nbytes, 5, noise))
            writer.finish()
        paths.append(path)
    return paths[0], paths[1], nbytes


def _diff(a: Path, b: Path) -> object:
    with open_path(a) as tf_a, open_path(b) as tf_b:
        return compare_files(tf_a, tf_b, DiffOptions())


def _cmp(a: Path, b: Path) -> None:
    if shutil.which("cmp"):
        subprocess.run(["cmp", "-s", str(a), str(b)], check=True)
        return
    import filecmp

    if not filecmp.cmp(a, b, shallow=False):
        raise AssertionError("files differ")


def _ulp_keys(bits: np.ndarray) -> np.ndarray:
    i = bits.astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def reference_stats(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """The same numbers with a plain chunked numpy loop (finite data, float64 accumulation). Sums of products
    use einsum, as ours do: BLAS dot products pay OpenBLAS thread wake-ups (~15 ms a call on a busy machine)."""
    max_abs, where, sum_abs, aa, bb, ab, dd, differing, ulp = -1.0, -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0
    for start in range(0, a.size, BLOCK):
        x = a[start:start + BLOCK].astype(np.float64)
        y = b[start:start + BLOCK].astype(np.float64)
        d = np.abs(x - y)
        i = int(d.argmax())
        if d[i] > max_abs:
            max_abs, where = float(d[i]), start + i
        sum_abs += float(d.sum())
        aa += float(np.einsum("i,i->", x, x))
        bb += float(np.einsum("i,i->", y, y))
        ab += float(np.einsum("i,i->", x, y))
        dd += float(np.einsum("i,i->", d, d))
        differing += int(np.count_nonzero(d))
        keys_a = _ulp_keys(a[start:start + BLOCK].view(np.int32))
        keys_b = _ulp_keys(b[start:start + BLOCK].view(np.int32))
        ulp = max(ulp, int(np.abs(keys_a - keys_b).max()))
    return {"max_abs": max_abs, "where": where, "mean_abs": sum_abs / a.size, "rel_l2": (dd / aa) ** 0.5,
            "cosine": ab / (aa * bb) ** 0.5, "differing": differing, "max_ulp": ulp}


def _mapped(path: Path) -> np.ndarray:
    with open_path(path) as tf:
        c = tf.tensor("w").components["data"]
        offset, length = c.offset, c.length
    return np.memmap(path, dtype=np.float32, mode="r", offset=offset, shape=(length // 4,))


_CHILD = """
from ztviewer.analysis.diff import DiffOptions, compare_files
from ztviewer.codec.multifile import open_path

a, b = open_path(sys.argv[1]), open_path(sys.argv[2])
base = status("VmRSS")
result = compare_files(a, b, DiffOptions())
print(json.dumps({"base": base, "peak": status("VmHWM"), "verdict": result.pairs[0].verdict.value}))
"""


def _rss_row(name: str, a: Path, b: Path) -> dict:
    if not os.path.exists("/proc/self/status"):
        return result(f"{name}: peak RSS above baseline (MiB)", 1.0, 1.0, "report",
                      note="no /proc/self/status on this system: not measured")
    doc = run_probe(_CHILD, a, b, what="diff")
    growth = max(doc["peak"] - doc["base"], 1)
    return result(f"{name}: peak RSS above baseline (MiB)", growth / 2**20, RSS_ALLOWANCE / 2**20, "<= 1.0",
                  unit="MiB", note=f"child process: peak (VmHWM) {doc['peak'] / 2**20:.0f} MiB, "
                  f"{doc['base'] / 2**20:.0f} MiB (VmRSS) after opening; mapped file pages count; allowance 256 MB "
                  f"(reference column); verdict {doc['verdict']}")


def bench_identical(tmpdir: Path, quick: bool) -> list[dict]:
    a, b, nbytes = _identical_pair(tmpdir, quick)
    verdict = _diff(a, b).pairs[0].verdict  # type: ignore[attr-defined]
    ours_s, ref_s = best_of(lambda: _diff(a, b), lambda: _cmp(a, b), repeats=3 if quick else 5)
    note = f"ours {ours_s * 1e3:.0f} ms, cmp {ref_s * 1e3:.0f} ms; page cache warm"
    if verdict is not Verdict.IDENTICAL:
        note += f"; WRONG VERDICT {verdict.value}"
    return [result(f"diff of two identical {fmt_size(nbytes)} files vs cmp", ours_s, ref_s, "<= 1.3", note=note,
                   profile=lambda: _diff(a, b)),
            _rss_row(f"identical {fmt_size(nbytes)} diff", a, b)]


def bench_stats(tmpdir: Path, quick: bool) -> list[dict]:
    a, b, nbytes = _stats_pair(tmpdir, quick)
    ours = _diff(a, b).pairs[0].stats  # type: ignore[attr-defined]
    ref = reference_stats(_mapped(a), _mapped(b))
    same = (ours.differing == ref["differing"] and ours.max_ulp == ref["max_ulp"]
            and np.isclose(ours.max_abs, ref["max_abs"]) and np.isclose(ours.rel_l2, ref["rel_l2"]))
    ours_s, ref_s = best_of(lambda: _diff(a, b), lambda: reference_stats(_mapped(a), _mapped(b)),
                            repeats=3, warmup=False)
    note = (f"ours {ours_s:.2f} s (open, pair, stored-bytes check, decode, statistics), chunked numpy "
            f"{ref_s:.2f} s" + ("" if same else "; NUMBERS DIFFER"))
    return [result(f"difference statistics of two {fmt_size(nbytes)} float32 tensors vs chunked numpy",
                   ours_s, ref_s, "<= 1.5", note=note, profile=lambda: _diff(a, b)),
            _rss_row(f"statistics {fmt_size(nbytes)} diff", a, b)]


def bench_shards(tmpdir: Path, quick: bool) -> list[dict]:
    folder, _, _ = _hf_checkpoint(tmpdir, quick)
    other = tmpdir / "diff_hf_copy"
    if not other.exists():
        shutil.copytree(folder, other)

    def open_both() -> None:
        with open_path(folder) as tf_a, open_path(other) as tf_b:
            assert len(tf_a.tensors) == len(tf_b.tensors)

    def open_and_pair() -> None:
        with open_path(folder) as tf_a, open_path(other) as tf_b:
            assert all(p.a is not None and p.b is not None for p in pair_tensors(tf_a, tf_b))

    n = SHARDS[quick]
    ours_s, ref_s = best_of(open_and_pair, open_both, repeats=3 if quick else 5)
    full_s, _ = best_of(lambda: _diff(folder, other), open_both, repeats=1, warmup=False)
    return [result(f"pair two {n:,}-shard HF checkpoints vs opening both", ours_s, ref_s, "<= 2.0",
                   note=f"{4 * n:,} tensors a side; full diff incl. stored-bytes checks {full_s:.2f} s",
                   profile=open_and_pair)]


def run(tmpdir: Path, quick: bool) -> list[dict]:
    return bench_identical(tmpdir, quick) + bench_stats(tmpdir, quick) + bench_shards(tmpdir, quick)


if __name__ == "__main__":  # pragma: no cover - manual run
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for row in run(Path(tmp), quick=os.environ.get("QUICK") == "1"):
            print({k: v for k, v in row.items() if not k.startswith("_")})
