"""Windows' rule for replacing a file, on Linux: ``os.replace`` refuses (PermissionError) while this process has
the target open or mapped. Linux tells which files are open (``/proc/self/fd``) and mapped (``/proc/self/maps``)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

PROC = Path("/proc/self")


def held_by_this_process(path: str) -> bool:
    real = os.path.realpath(path)
    for link in (PROC / "fd").iterdir():
        try:
            if os.readlink(link) == real:
                return True
        except OSError:
            continue
    return any(line.rstrip("\n").endswith(" " + real) for line in (PROC / "maps").read_text().splitlines())


def refuse_replacing_open_files(monkeypatch) -> list[str]:
    """Patch ``os.replace`` with Windows' rule; returns the targets it refused."""
    if not (PROC / "maps").is_file():
        pytest.skip("needs /proc to tell which files are open")
    refused: list[str] = []
    real_replace = os.replace

    def replace(src, dst, *args, **kwargs):
        if os.path.exists(dst) and held_by_this_process(os.fspath(dst)):
            refused.append(os.fspath(dst))
            raise PermissionError(13, "The process cannot access the file because it is being used by another "
                                      "process", os.fspath(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    return refused
