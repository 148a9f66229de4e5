"""Shared test setup: headless Qt, and the shared corpus (skipped with a reason when absent)."""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Property tests draw the same examples on every run (a CI failure reproduces anywhere), with no per-example
# deadline: a shared 2-core machine under load is not a reason to fail. HYPOTHESIS_PROFILE=explore draws anew.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# This run's own single-instance socket: launches made by tests (and their child processes) never hand files to a
# ztviewer window the user has open, and a launch by the user never reaches a window a test opened.
os.environ["ZTVIEWER_INSTANCE_NAME"] = f"ztviewer-tests-{os.getpid()}-{uuid.uuid4().hex[:8]}"

from tests._corpus import CORPUS, corpus_available  # noqa: E402
from tests._no_posix import ENV as _NO_POSIX_ENV  # noqa: E402
from tests._no_posix import hide_posix_calls  # noqa: E402

if os.environ.get(_NO_POSIX_ENV) == "1":  # before ztviewer is imported: see tests/test_without_posix.py
    hide_posix_calls()


@pytest.fixture
def corpus_dir() -> Path:
    if not corpus_available():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
