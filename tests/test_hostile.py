"""Issue 2 acceptance: every hostile file gets the expected verdict, never a traceback, in bounded memory
(time only by hang guards: a shared machine makes a wall-clock bound flaky)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests._corpus import CORPUS, corpus_available, hostile_entries
from ztviewer.cli import main

pytestmark = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")

ENTRIES = hostile_entries()


@pytest.mark.timeout(60)  # a hang guard, not a figure
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"])
def test_check_verdict(entry, capsys):
    code = main(["check", str(CORPUS / "hostile" / entry["file"])])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "Traceback" not in text and "internal error" not in text
    if entry["expect"] == "reject":
        assert code == 1, text
        assert "error:" in text
    else:
        assert code == 0, text
        assert "warning:" in text and "error:" not in text


BOMBS = ["zt1x_zstd_bomb_6GiB.zt", "zt10_zstd_frame_declares_10GB.zt", "zt01_cbor_huge_array_len.zt",
         "st_header_len_u64max.safetensors", "blz_rank_overflow.blz"]

_PROBE = """
import sys
from ztviewer.cli import main
code = main(["check", sys.argv[1]])
# VmHWM belongs to this address space; ru_maxrss would carry the parent's peak across fork + exec
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("RESULT", code, hwm)
"""


@pytest.mark.parametrize("name", BOMBS)
def test_bombs_are_rejected_within_bounded_memory(name):
    path = CORPUS / "hostile" / name
    # the timeout is a hang guard; what a bomb would cost is memory (inflating it), asserted below
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(out for out in proc.stdout.splitlines() if out.startswith("RESULT"))
    _, code, peak_kib = line.split()
    assert int(code) == 1
    assert int(peak_kib) < 1024 * 1024  # 1 GiB


def test_hostile_list_covers_the_folder():
    listed = {e["file"] for e in ENTRIES}
    present = {p.name for p in (CORPUS / "hostile").iterdir() if p.name != "HOSTILE.json"}
    assert present <= listed | {"blz_ndim_1.blz"}, present - listed
