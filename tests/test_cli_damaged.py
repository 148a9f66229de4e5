"""``convert`` / ``edit`` of damaged input: exit 1 naming the tensor and the rule, nothing written, so no output
can pass ``check``; ``--skip-damaged`` writes the sound tensors and says which were left out and why."""
from __future__ import annotations

import pytest

from tests._corpus import SHARED
from tests.codec.writers.test_damaged_input import _two_tensors
from ztviewer.cli import main

REJECT = SHARED / "ref" / "ztensor-v2-conformance" / "reject"


def _vector(name: str):
    path = REJECT / name
    if not path.is_file():
        pytest.skip(f"no conformance vector {path}")
    return path


@pytest.mark.parametrize(("to", "options"), [("zt", ["--digest", "sha256"]), ("zt-objects", ["--digest", "sha256"]),
                                             ("zt-v0.1", []), ("safetensors", []), ("zt-v2", ["--digest", "sha256"]),
                                             ("zt-v2", [])])
@pytest.mark.parametrize(("vector", "rule"), [("verify-digest-mismatch.zt", "[digest (v2 §3.4)"),
                                              ("bool-invalid-byte.zt", "not 0 or 1")])
def test_convert_of_a_damaged_vector_exits_1_and_writes_nothing(vector, rule, to, options, tmp_path, capsys):
    out = tmp_path / "v.out"
    assert main(["convert", str(_vector(vector)), str(out), "--to", {"zt": "zt-v1.0"}.get(to, to), *options]) == 1
    err = capsys.readouterr().err
    assert "tensor 't', component 'data', at byte 4096" in err and "cannot be written" in err and rule in err
    assert "--skip-damaged writes the other tensors" in err
    assert not out.exists()
    assert main(["check", str(out)]) == 2  # there is no output to look sound


def test_convert_skip_damaged_says_what_it_left_out(tmp_path, capsys):
    src = _two_tensors(tmp_path / "two.zt")
    out = tmp_path / "rest.safetensors"
    assert main(["convert", str(src), str(out), "--skip-damaged"]) == 0
    printed = capsys.readouterr().out
    assert "skipped 1 damaged tensor (not written):" in printed
    assert "tensor 'b', component 'data', at byte 8192" in printed and "the file records 0000000000000000" in printed
    assert main(["check", str(out)]) == 0


def test_edit_output_refuses_then_skips_damaged(tmp_path, capsys):
    src = _two_tensors(tmp_path / "two.zt")
    out = tmp_path / "edited.zt"
    assert main(["edit", str(src), "--set-attr", "k=v", "-o", str(out)]) == 1
    assert "tensor 'b', component 'data'" in capsys.readouterr().err and not out.exists()
    assert main(["edit", str(src), "--set-attr", "k=v", "-o", str(out), "--skip-damaged"]) == 0
    assert "skipped 1 damaged tensor" in capsys.readouterr().out
    assert main(["check", str(out)]) == 0


@pytest.mark.parametrize("command", ["convert", "edit"])
def test_help_tells_the_policy(command, capsys):
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--skip-damaged" in text and "refuses the write" in text
