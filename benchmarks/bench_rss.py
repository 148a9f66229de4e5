"""Peak resident memory of the streaming passes over one large tensor, whatever its size (issue 19 §2):
``check``, ``convert`` (raw → zstd, zstd → raw, raw → safetensors), ``export`` (raw and zstd) at 4 GiB and
16 GiB (64 MiB with ``--quick``). Each runs in a fresh child process that reports its own VmRSS just before
the pass and its peak (VmHWM) after it; the goal is at most 256 MB above that baseline (the reference
column is the allowance). Mapped file pages count, as they do for the user.

The inputs are sparse files (the data a hole, so zeros): the peak does not depend on the values, and a
16 GiB input costs no disk. The raw tensor carries a crc32c digest, so ``check`` reads every byte. The
16 GiB size is left out (with a row saying so) when the temporary directory has too little free space for
the outputs (the largest output is written, then removed, before the next pass). Decoding a zstd tensor
past the default 4 GiB decode limit is opted into (``ZTVIEWER_MAX_DECODED``), as a user must.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import crc32c
import numpy as np
import zstandard

from . import files
from .common import result
from .probe import run_probe

RSS_ALLOWANCE = 256 << 20
SIZES = {False: (4 << 30, 16 << 30), True: (64 << 20,)}
SPY_NNZ = {False: 100_000_000, True: 1_000_000}
_FRAME = 16 << 20  # decoded bytes per zstd frame of the compressed input

_CHILD = """
import os
os.environ["ZTVIEWER_MAX_DECODED"] = str(64 << 30)  # decoding more than the default 4 GiB is opted into
action, src, out = sys.argv[1:4]
from ztviewer.cli import run_command
from ztviewer.codec.check import check_file
from ztviewer.codec.convert import convert
from ztviewer.codec.multifile import open_path

base = status("VmRSS")
if action == "check":
    report = check_file(open_path(src))
    outcome = f"ok={report.ok}, {report.digests_verified} digest(s) verified"
elif action.startswith("convert-"):
    to, compress = action.split("-")[1:]
    method = {"keep": None, "raw": "raw", "zstd": ("zstd", 3)}[compress]
    outcome = f"{convert(src, out, to=to, compress=method).size:,} bytes written"
elif action == "export":
    outcome = f"exit {run_command(['export', src, 'w', '-o', out])}"
elif action == "spy":  # what the spy view runs on its worker: load, select the plane, facts, whole-plane image
    from ztviewer.analysis.spy_sources import CooPlaneSource, prepare
    from ztviewer.session.inspect_data import load_sparse  # as the view loads it (views of the map when large)

    class Context:
        def is_cancelled(self):
            return False

        def report_progress(self, done, total):
            pass

    tf = open_path(src)
    tensor = tf.tensors[0]
    made = prepare(Context(), lambda ctx: CooPlaneSource.from_coo(load_sparse(tf, tensor), (0, 1), {}), (1024, 1024))
    outcome = f"{int(made.overview.image.counts.sum()):,} entries binned"
print(json.dumps({"base": base, "peak": status("VmHWM"), "outcome": outcome}))
"""


def _sparse_raw_zt(tmpdir: Path, size: int) -> Path:
    """A zTensor v1.0 file whose one float32 tensor of ``size`` bytes is a hole, with its crc32c digest."""
    path = tmpdir / f"rss_raw_{size}.zt"
    if path.exists():
        return path
    zeros, crc = bytes(_FRAME), 0
    for start in range(0, size, _FRAME):
        crc = crc32c.crc32c(zeros[:min(_FRAME, size - start)], crc)
    writer = files.ZtV10Writer(path)
    writer.add("w", "float32", [size // 4], [], digests=())
    writer.skip(size)  # the tensor's bytes: a hole
    writer.tensors["w"]["components"]["data"].update(length=size, digest=f"crc32c:0x{crc:08X}")
    writer.finish()
    return path


def _zstd_zt(tmpdir: Path, size: int) -> Path:
    """The same tensor stored as zstd frames of 16 MiB of zeros each."""
    path = tmpdir / f"rss_zstd_{size}.zt"
    if path.exists():
        return path
    frame = zstandard.ZstdCompressor(level=1).compress(bytes(_FRAME))
    last = zstandard.ZstdCompressor(level=1).compress(bytes(size % _FRAME)) if size % _FRAME else b""
    chunks = [frame] * (size // _FRAME) + ([last] if last else [])
    writer = files.ZtV10Writer(path)
    writer.add("w", "float32", [size // 4], chunks, encoding="zstd")
    writer.finish()
    return path


def _coo_zt(tmpdir: Path, nnz: int, extent: int = 1 << 20) -> Path:
    """A zTensor v1.0 sparse_coo float32 matrix of ``nnz`` entries at random (unsorted) coordinates, written in
    chunks (coordinates ``(2, nnz)`` uint64, rows then columns; the values a hole, explicit zeros)."""
    path = tmpdir / f"rss_coo_{nnz}.zt"
    if path.exists():
        return path
    rng = np.random.default_rng(5)
    step = 1 << 23

    def coords():
        for _axis in range(2):
            for start in range(0, nnz, step):
                yield memoryview(rng.integers(0, extent, min(step, nnz - start), dtype=np.uint64)).cast("B")

    writer = files.ZtV10Writer(path)
    values = writer.add("values", "float32", [nnz], [])
    writer.skip(nnz * 4)
    values["length"] = nnz * 4
    index = writer.add("coords", "uint64", [2 * nnz], coords())
    components = {"values": {k: v for k, v in values.items() if not k.startswith("_")},
                  "coords": {k: v for k, v in index.items() if not k.startswith("_")}}
    writer.tensors = {"m": {"dtype": "float32", "shape": [extent, extent], "format": "sparse_coo",
                            "components": components}}
    writer.finish()
    return path


def _child(action: str, src: Path, out: Path) -> dict[str, Any]:
    return run_probe(_CHILD, action, src, out, what=action)  # its last line: export says what it wrote


def _row(label: str, size: int, action: str, src: Path, out: Path) -> dict[str, Any]:
    name = f"peak RSS: {label} {files.fmt_size(size)} (MiB above baseline)"
    try:
        doc = _child(action, src, out)
    except RuntimeError as exc:  # one failed pass is a failed row, the others still run
        return result(name, float("nan"), RSS_ALLOWANCE / 2**20, "<= 1.0", unit="MiB", passed=False, note=str(exc))
    finally:
        written = out.stat().st_size if out.exists() else 0
        out.unlink(missing_ok=True)
    growth = max(doc["peak"] - doc["base"], 1)
    return result(name, growth / 2**20, RSS_ALLOWANCE / 2**20, "<= 1.0", unit="MiB",
                  note=f"child process: peak (VmHWM) {doc['peak'] / 2**20:.0f} MiB, {doc['base'] / 2**20:.0f} MiB "
                       f"(VmRSS) before the pass; {doc['outcome']}; output {files.fmt_size(written)}; "
                       "allowance 256 MB (reference column)")


def run(tmpdir: Path, quick: bool) -> list[dict[str, Any]]:
    if not os.path.exists("/proc/self/status"):
        return [result("peak RSS of streaming passes", 1.0, 1.0, "report",
                       note="skipped: no /proc/self/status on this system")]
    rows: list[dict[str, Any]] = []
    for size in SIZES[quick]:
        if shutil.disk_usage(tmpdir).free < size + (8 << 30):
            rows.append(result(f"peak RSS at {files.fmt_size(size)}", 1.0, 1.0, "report",
                               note=f"skipped: less than {files.fmt_size(size + (8 << 30))} free in {tmpdir}"))
            continue
        raw, packed = _sparse_raw_zt(tmpdir, size), _zstd_zt(tmpdir, size)
        out_zt, out_st, out_npy = tmpdir / "rss_out.zt", tmpdir / "rss_out.safetensors", tmpdir / "rss_out.npy"
        rows += [
            _row("check raw .zt (crc32c)", size, "check", raw, out_zt),
            _row("convert raw → zstd .zt", size, "convert-zt-zstd", raw, out_zt),
            _row("convert zstd → raw .zt", size, "convert-zt-raw", packed, out_zt),
            _row("convert raw .zt → safetensors", size, "convert-safetensors-keep", raw, out_st),
            _row("check zstd .zt", size, "check", packed, out_zt),
            _row("export raw .zt → .npy", size, "export", raw, out_npy),
            _row("export zstd .zt → .npy", size, "export", packed, out_npy),
        ]
        for path in (raw, packed):
            path.unlink(missing_ok=True)
    nnz = SPY_NNZ[quick]
    coo = _coo_zt(tmpdir, nnz)
    rows.append(_row(f"spy plot of {nnz / 1e6:g}M unsorted COO non-zeros,", coo.stat().st_size, "spy", coo,
                     tmpdir / "rss_unused"))
    coo.unlink()
    return rows
