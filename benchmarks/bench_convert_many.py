"""Issue 16 §12 (scale): ``convert`` (to zTensor v1.0 and to safetensors) and ``diff`` of a file of 100,000
(2,000 with ``quick``) one-element tensors, each against ``check`` of the same file in the same run.

Every side is the command line in a child process (start-up included on both sides), as a user runs it: the
figure is the per-tensor cost of planning and writing (or comparing) relative to reading and checking.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

from .common import best_of, result

COUNT = {False: 100_000, True: 2_000}


def one_element_safetensors(path: Path, n: int) -> Path:
    """``n`` one-element float32 tensors, header written directly (the hostile probe's §12 case)."""
    header = json.dumps({f"layer.{i}.w": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
                         for i in range(n)}).encode()
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(4 * n))
    return path


def _cli(*args: str | Path) -> None:
    subprocess.run([sys.executable, "-m", "ztviewer.cli", *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def run(tmpdir: Path, quick: bool) -> list[dict]:
    n = COUNT[quick]
    source = one_element_safetensors(tmpdir / "one_element.safetensors", n)
    def check() -> None:
        _cli("check", source)

    rows = []
    for label, ours in (("convert → zt v1.0", lambda: _cli("convert", source, tmpdir / "o.zt", "--to", "zt-v1.0")),
                        ("convert → safetensors", lambda: _cli("convert", source, tmpdir / "o.safetensors")),
                        ("diff (file against itself)", lambda: _cli("diff", source, source))):
        ours_s, check_s = best_of(ours, check, repeats=3, warmup=False)
        rows.append(result(f"{label}, {n:,} one-element tensors", ours_s, check_s, "report",
                           note="reference: `ztviewer check` of the same file (child processes, best of 3)"))
    return rows
