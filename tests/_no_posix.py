"""Run ztviewer as on a system without the POSIX-only calls (Windows): they are removed from ``os`` and
``fcntl`` cannot be imported. ``tests/conftest.py`` applies this to a whole pytest run when
``ZTVIEWER_TEST_NO_POSIX=1`` (see ``tests/test_without_posix.py``); :func:`hidden_posix_calls` does it inside one
test."""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: calls some platforms lack; ``ztviewer.codec.portable`` must work without every one of them.
POSIX_ONLY = ("pread", "preadv", "pwrite", "copy_file_range", "sendfile", "splice", "posix_fadvise", "posix_fallocate")
ENV = "ZTVIEWER_TEST_NO_POSIX"
_SHUTIL_FLAGS = ("_USE_CP_SENDFILE", "_USE_CP_COPY_FILE_RANGE")


def hide_posix_calls() -> dict[str, object]:
    """Remove the calls for good (a whole test process); returns what was removed."""
    removed = {name: getattr(os, name) for name in POSIX_ONLY if hasattr(os, name)}
    for name in removed:
        delattr(os, name)
    sys.modules["fcntl"] = None  # type: ignore[assignment]  # ``import fcntl`` now raises ImportError
    for flag in _SHUTIL_FLAGS:  # shutil decided at import time; on such a system it would not use them
        if getattr(shutil, flag, False):
            setattr(shutil, flag, False)
            removed["shutil." + flag] = True
    return removed


@contextmanager
def hidden_posix_calls() -> Iterator[None]:
    """The calls removed for the duration of the block, restored afterwards."""
    had_fcntl, fcntl_module = "fcntl" in sys.modules, sys.modules.get("fcntl")
    removed = hide_posix_calls()
    try:
        yield
    finally:
        for name, call in removed.items():
            if name.startswith("shutil."):
                setattr(shutil, name.removeprefix("shutil."), call)
            else:
                setattr(os, name, call)
        if had_fcntl:
            sys.modules["fcntl"] = fcntl_module
        else:
            sys.modules.pop("fcntl", None)
