"""Issue 16's classes through every command in a child process under limits (tests/hostile_probe.py): exit 0, 1
or 2, no traceback nor "internal error", every human-readable line printable, within the per-command alarm and
a 1 GiB address space, peak resident size under 1 GiB. One case per class here; ``python -m tests.hostile_probe``
runs all of them and prints the audit table."""
from __future__ import annotations

import sys

import pytest

from tests import hostile_probe as hp

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the probe's child limits use POSIX signals")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", hp.REPRESENTATIVES)
def test_every_command_is_clean_under_limits(tmp_path, name):
    number, path, env = hp.write_case(tmp_path, name)
    out = tmp_path / "out"
    out.mkdir()
    outcome = hp.probe(path, out, env)
    assert len(outcome.rows) >= 6, outcome
    assert not outcome.findings(), f"§{number} {name}: {outcome.findings()}"


@pytest.mark.timeout(300)
def test_multi_file_sets_are_clean_under_limits(tmp_path):
    """§9: a shard linked out of the folder (read, named), a FIFO as a shard or as the file (refused, never
    waited on), a NUL in a shard name."""
    sets = hp.write_set_cases(tmp_path)
    for name, path in sets.items():
        out = tmp_path / f"out-{name}"
        out.mkdir()
        outcome = hp.probe(path, out)
        assert not outcome.findings(), f"§9 {name}: {outcome.findings()}"
        if name == "fifo_as_file":
            assert all(row["code"] in (1, 2) for row in outcome.rows)


def test_the_probe_sees_what_it_must_report(tmp_path):
    """The probe is not blind: a command that raises, one that hangs past its alarm and an address-space limit
    too small for the interpreter are all findings."""
    broken = hp.Outcome(rows=[{"argv": ["info", "x"], "code": 3, "seconds": 0.1, "traceback": False,
                               "internal": True, "unprintable": ["'\\x1b'"], "tail": "internal error"},
                              {"argv": ["check", "x"], "code": "hang", "seconds": 10.0, "traceback": False,
                               "internal": False, "unprintable": [], "tail": ""}], peak_rss=2 << 30, returncode=0)
    found = " | ".join(broken.findings())
    assert "info x: 3" in found and "internal error" in found and "unprintable" in found
    assert "check x: hang" in found and "peak RSS" in found
    _, path, env = hp.write_case(tmp_path, "zt10_coo_scalar")
    starved = hp.probe(path, tmp_path, env, address_space=64 << 20)
    assert starved.findings()


@pytest.mark.timeout(300)
def test_saves_leave_nothing_behind_under_limits(tmp_path):
    """§11: a temporary file a killed save left in the output folder is removed by the next save there (and said
    so); export and convert leave no temporary of their own."""
    _, path, env = hp.write_case(tmp_path, "zt01_aliased_blob")
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".o.zt.ztviewer-tmp-1234abcd"
    stale.write_bytes(bytes(1 << 20))
    outcome = hp.probe(path, out, env)
    assert not outcome.findings()
    said = " ".join(row["tail"] for row in outcome.rows if row["argv"][0] in ("export", "convert"))
    assert "a temporary file an interrupted save left behind" in said   # by the first save into the folder
    assert not stale.exists() and not [p.name for p in out.iterdir() if ".ztviewer-tmp-" in p.name]
    assert {p.name for p in out.iterdir()} == {"o.zt", "o.safetensors", "x.npy"}
