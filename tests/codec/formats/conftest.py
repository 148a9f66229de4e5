"""Fixtures for the codec tests. Several test modules share this file: keep each block self-contained."""
from __future__ import annotations

# --- zTensor reader fixtures (tests/codec/formats/test_zt_*.py) -------------------------------------------------
from pathlib import Path as _ZtPath

import pytest as _zt_pytest


@_zt_pytest.fixture
def zt_corpus_files() -> dict[_ZtPath, dict]:
    """Path → MANIFEST.json entry for every zTensor 0.1 / 1.x corpus file; skips without the corpus."""
    from tests._corpus import SHARED
    from tests.codec.formats.zt_builders import zt_corpus_entries

    entries = zt_corpus_entries()
    if not entries:
        _zt_pytest.skip(f"shared corpus not found at {SHARED.resolve()}")
    return {SHARED / "corpus" / e["path"]: e for e in entries}
# --- end of zTensor reader fixtures -----------------------------------------------------------------------
