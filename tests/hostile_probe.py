"""A probe of issue 16's thirteen classes: hostile files built here (``struct.pack`` / hand-written CBOR, through
:mod:`tests.hostile_values`), each run through every command in a child process under limits.

:func:`probe` runs ``info``, ``info --json --hash``, ``check``, ``export`` (the first tensor), ``convert`` (to
zTensor and to safetensors) and ``diff`` (the file against itself) in one child per file, each command with its
own alarm (:data:`COMMAND_SECONDS`) and the whole child under an address-space limit (:data:`ADDRESS_SPACE`,
``RLIMIT_AS`` where the system has it). It reports, per command, the exit code, whether a traceback or an
"internal error" was printed, whether a human-readable line held a control character, and the child's peak
resident size. ``python -m tests.hostile_probe`` prints the table for every case (the audit); the test module
runs the fast cases.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import zstandard

from tests import hostile_values as hv

COMMAND_SECONDS = 10
ADDRESS_SPACE = 1 << 30
ROOT = Path(__file__).resolve().parents[1]

# class of issue 16 → the hostile_values cases that stand for it
CLASSES: dict[int, tuple[str, ...]] = {
    1: tuple(n for n in hv.CASES if "bignum" in n or "long_number" in n),
    2: tuple(n for n in hv.CASES if "shared" in n),
    3: tuple(n for n in hv.CASES if "deep" in n or "nested" in n),
    4: tuple(n for n in hv.CASES if ("name" in n or "generator" in n) and "bignum" not in n),
    6: ("blz_ndim_255", "blz_ndim_65", "blz_tt_wide_middle", "zt10_coo_scalar"),
    7: ("zt10_sparse_zstd_unsized",),
    8: ("zt10_tt_zstd_core",),
    13: ("blz_trailing_bytes", "zt01_aliased_blob"),
}


# ---------------------------------------------------------------------------------------------- new cases

def escaped_erroring_keys(n: int) -> bytes:
    """§5: ``n`` safetensors entries whose keys use JSON escapes and whose dtype is unknown (each an error)."""
    entries = ", ".join(f'"t\\u00e9\\n{i}": {{"dtype": "Q9", "shape": [1], "data_offsets": [0, 4]}}' for i in range(n))
    return hv.safetensors_file("{" + entries + "}", bytes(4))


def zstd_frame_of_zeros(size: int) -> bytes:
    compressor = zstandard.ZstdCompressor(level=1)
    chunk = bytes(1 << 20)
    writer = compressor.compressobj(size=size)
    parts = [writer.compress(chunk) for _ in range(size >> 20)]
    return b"".join(parts) + writer.flush()


def v01_aliases_of_one_frame(count: int, decoded: int) -> bytes:
    """§7: ``count`` v0.1 entries of one name, all naming one zstd frame of ``decoded`` zero bytes."""
    frame = zstd_frame_of_zeros(decoded)
    entry = hv.cbor_map([(hv.enc("name"), hv.enc("a")), (hv.enc("offset"), hv.enc(64)),
                         (hv.enc("size"), hv.enc(len(frame))), (hv.enc("dtype"), hv.enc("float32")),
                         (hv.enc("layout"), hv.enc("dense")), (hv.enc("shape"), hv.enc([decoded // 4])),
                         (hv.enc("encoding"), hv.enc("zstd"))])
    return hv.v01_file([entry] * count, frame)


def sparse_values_bomb(decoded: int) -> bytes:
    """§7: a COO tensor of 1 entry whose zstd values (no recorded size) decode to ``decoded`` bytes."""
    frame = zstd_frame_of_zeros(decoded)
    coords = np.zeros(1, "<u8").tobytes()
    pad = -(-len(frame) // 64) * 64
    comps = hv.cbor_map([
        (hv.enc("values"), hv.cbor_map([(hv.enc("offset"), hv.enc(64)), (hv.enc("length"), hv.enc(len(frame))),
                                        (hv.enc("encoding"), hv.enc("zstd"))])),
        (hv.enc("coords"), hv.cbor_map([(hv.enc("offset"), hv.enc(64 + pad)), (hv.enc("length"), hv.enc(8))]))])
    tensor = hv.cbor_map([(hv.enc("dtype"), hv.enc("float32")), (hv.enc("shape"), hv.enc([4])),
                          (hv.enc("format"), hv.enc("sparse_coo")), (hv.enc("components"), comps)])
    return hv.zt_file(hv.V1, hv.v10(hv.cbor_map([(hv.enc("s"), tensor)])), frame + bytes(pad - len(frame)) + coords)


def many_tensors(n: int) -> bytes:
    """§12: ``n`` one-element safetensors tensors (the per-tensor cost of every command)."""
    header = {f"layer.{i}.w": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]} for i in range(n)}
    return hv.safetensors_file(json.dumps(header), bytes(4 * n))


def write_set_cases(folder: Path) -> dict[str, Path]:
    """§9: multi-file sets: a shard linked out of the folder, a FIFO as a shard and as the file, a NUL in a
    shard name. Returns name → path to open (only those the system can make)."""
    from tests.codec.multifile.test_multifile_builders import hf_checkpoint

    made: dict[str, Path] = {}
    if hasattr(os, "symlink"):
        home = folder / "linked"
        home.mkdir()
        index = hf_checkpoint(home)
        shard = next(p for p in home.iterdir() if p.suffix == ".safetensors")
        outside = folder / "outside.bin"
        shard.rename(outside)
        shard.symlink_to(outside)
        made["hf_shard_link_outside"] = index
    if hasattr(os, "mkfifo"):
        pipe_home = folder / "piped"
        pipe_home.mkdir()
        index = hf_checkpoint(pipe_home)
        shard = next(p for p in pipe_home.iterdir() if p.suffix == ".safetensors")
        shard.unlink()
        os.mkfifo(shard)
        made["hf_shard_fifo"] = index
        os.mkfifo(folder / "fifo.safetensors")
        made["fifo_as_file"] = folder / "fifo.safetensors"
    nul_home = folder / "nul"
    nul_home.mkdir()
    index = hf_checkpoint(nul_home)
    doc = json.loads(index.read_text())
    first = next(iter(doc["weight_map"]))
    doc["weight_map"][first] = "model\u0000.safetensors"
    index.write_text(json.dumps(doc))
    made["hf_shard_name_nul"] = index
    return made


NEW_CASES: dict[str, tuple[int, Callable[[], bytes], dict[str, str]]] = {
    "st_escaped_erroring_keys_20k": (5, lambda: escaped_erroring_keys(20_000), {}),
    "zt01_aliases_of_one_frame": (7, lambda: v01_aliases_of_one_frame(1000, 64 << 20),
                                  {"ZTVIEWER_MAX_DECODED": str(256 << 20)}),
    "zt10_sparse_values_bomb": (7, lambda: sparse_values_bomb(512 << 20), {"ZTVIEWER_MAX_DECODED": str(128 << 20)}),
    "st_many_tensors_100k": (12, lambda: many_tensors(100_000), {}),
    "st_many_tensors_10k": (12, lambda: many_tensors(10_000), {}),
}
#: one case per class for the test suite (the audit, ``python -m tests.hostile_probe``, runs them all)
REPRESENTATIVES = ("zt10_bignum_shape", "st_long_number_offsets", "zt10_shared_laughs_attribute",
                   "zt01_shared_self_shape", "st_metadata_deep_arrays", "zt10_name_escapes", "zt10_name_surrogate",
                   "st_escaped_erroring_keys_20k", "blz_ndim_255", "blz_tt_wide_middle", "zt10_coo_scalar",
                   "zt01_aliases_of_one_frame", "zt10_sparse_values_bomb", "zt10_tt_zstd_core",
                   "st_many_tensors_10k", "blz_trailing_bytes", "zt01_aliased_blob")


# ---------------------------------------------------------------------------------------------- the child

_CHILD = r"""
import io, json, os, resource, signal, sys, time, traceback, contextlib
limit = int(sys.argv[2])
if limit and hasattr(resource, "RLIMIT_AS"):
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from ztviewer.cli import main

class Hang(BaseException):
    pass

def alarm(*_):
    raise Hang()

signal.signal(signal.SIGALRM, alarm)
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    outcome = None
    signal.alarm(int(sys.argv[3]))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            outcome = main(argv)
    except Hang:
        outcome = "hang"
    except BaseException as exc:
        outcome = "crash"
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
    seconds = time.monotonic() - start
    text = out.getvalue() + err.getvalue()
    human = (err.getvalue() + ("" if "--json" in argv else out.getvalue()))
    bad = [c for c in human
           if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f or 0xd800 <= ord(c) <= 0xdfff]
    print(json.dumps({"argv": argv[:2], "code": outcome, "seconds": round(seconds, 2),
                      "traceback": "Traceback" in text, "internal": "internal error" in text,
                      "unprintable": sorted(set(map(repr, bad)))[:5], "tail": text[-300:]}), flush=True)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux keeps the parent's across fork
try:
    with open("/proc/self/status") as status:  # this process's own high-water mark
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass
print(json.dumps({"peak_rss": peak}), flush=True)
"""


@dataclass
class Outcome:
    """What one child printed: one row per command, the peak resident size, how it ended."""

    rows: list[dict] = field(default_factory=list)
    peak_rss: int | None = None
    returncode: int | None = None
    stderr: str = ""

    def findings(self, rss_limit: int = ADDRESS_SPACE) -> list[str]:
        """Every traceback, internal error, crash, hang, exit code past 2, unprintable output or overrun."""
        found = []
        if self.returncode != 0:
            found.append(f"child ended with {self.returncode}: {self.stderr[-500:]}")
        for row in self.rows:
            what = " ".join(row["argv"])
            if row["code"] not in (0, 1, 2):
                found.append(f"{what}: {row['code']} after {row['seconds']} s: {row['tail']}")
            if row["traceback"] or row["internal"]:
                found.append(f"{what}: traceback / internal error: {row['tail']}")
            if row["unprintable"]:
                found.append(f"{what}: unprintable {row['unprintable']}")
        if self.peak_rss is not None and self.peak_rss > rss_limit:
            found.append(f"peak RSS {self.peak_rss:,} bytes")
        return found


def commands(path: Path, out: Path, tensor: str | None) -> list[list[str]]:
    found = [["info", str(path)], ["info", "--json", "--hash", str(path)], ["check", str(path)],
             ["convert", str(path), str(out / "o.zt")], ["convert", str(path), str(out / "o.safetensors")],
             ["diff", str(path), str(path)]]
    if tensor is not None:
        found.insert(3, ["export", str(path), tensor, "-o", str(out / "x.npy")])
    return found


def first_tensor(path: Path, env: dict[str, str]) -> str | None:
    """The first tensor name ``info --json`` lists (``None`` when it lists none or fails)."""
    proc = subprocess.run([sys.executable, "-m", "ztviewer", "info", "--json", str(path)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env=env, check=False)
    try:
        names = [t["name"] for t in json.loads(proc.stdout).get("tensors", [])]
    except (ValueError, AttributeError):
        return None
    return next((n for n in names if "\0" not in n and not n.startswith("-")), None)


def probe(path: Path, out: Path, env_extra: dict[str, str] | None = None, *, seconds: int = COMMAND_SECONDS,
          address_space: int = ADDRESS_SPACE) -> Outcome:
    """Run every command on ``path`` in one child under the limits; ``out`` receives what they write."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **(env_extra or {}))
    env.pop("ZTVIEWER_DEBUG", None)
    argvs = commands(path, out, first_tensor(path, env))
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(argvs), str(address_space), str(seconds)],
                          capture_output=True, text=True, timeout=seconds * len(argvs) + 60, cwd=ROOT, env=env,
                          check=False)
    outcome = Outcome(returncode=proc.returncode, stderr=proc.stderr)
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        if "peak_rss" in row:
            outcome.peak_rss = row["peak_rss"]
        else:
            outcome.rows.append(row)
    return outcome


def write_case(folder: Path, name: str) -> tuple[int, Path, dict[str, str]]:
    """The class, the file and the environment of case ``name`` (of :data:`CLASSES` or :data:`NEW_CASES`)."""
    if name in NEW_CASES:
        number, build, env = NEW_CASES[name]
        path = folder / (name + hv.suffix(name))
        path.write_bytes(build())
        return number, path, env
    number = next(k for k, names in CLASSES.items() if name in names)
    path = folder / (name + hv.suffix(name))
    path.write_bytes(hv.CASES[name]())
    return number, path, {}


def all_case_names() -> list[str]:
    return [n for names in CLASSES.values() for n in names] + list(NEW_CASES)


def main() -> None:
    import tempfile

    only = sys.argv[1:]
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        cases = [(name, *write_case(folder, name)) for name in all_case_names() if not only or name in only]
        sets = write_set_cases(folder)
        cases += [(name, 9, path, {}) for name, path in sets.items() if not only or name in only]
        for name, number, path, env in sorted(cases, key=lambda c: c[1]):
            out = folder / f"out-{name}"
            out.mkdir()
            outcome = probe(path, out, env)
            slowest = max((r["seconds"] for r in outcome.rows), default=0)
            codes = ",".join(str(r["code"]) for r in outcome.rows)
            found = outcome.findings()
            print(f"§{number:<2} {name:34} codes {codes:18} slowest {slowest:5.1f} s  peak "
                  f"{(outcome.peak_rss or 0) >> 20:5} MiB  {'OK' if not found else 'FINDINGS'}", flush=True)
            for line in found:
                print("      ", line.replace("\n", " ")[:400])


if __name__ == "__main__":
    main()


