"""Shared test setup: headless Qt, and the shared corpus (skipped with a reason when absent)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import CORPUS, corpus_available  # noqa: E402
from _no_posix import ENV as _NO_POSIX_ENV  # noqa: E402
from _no_posix import hide_posix_calls  # noqa: E402

if os.environ.get(_NO_POSIX_ENV) == "1":  # before ztviewer is imported: see tests/test_without_posix.py
    hide_posix_calls()


@pytest.fixture
def corpus_dir() -> Path:
    if not corpus_available():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
