"""The bundled demo files (README's launch command opens them) are present and sound."""
from __future__ import annotations

import pytest

from ztviewer.cli import main
from ztviewer.paths import demo_files


def test_demo_has_one_file_of_each_kind():
    suffixes = sorted(p.rsplit(".", 1)[1] for p in demo_files())
    assert suffixes == ["blz", "safetensors", "zt", "zt"]


@pytest.mark.parametrize("path", demo_files())
def test_demo_file_checks_clean(path, capsys):
    assert main(["check", path]) == 0
    assert "warning:" not in capsys.readouterr().out
