"""Where the shared corpus lives, and its manifests (``from tests._corpus import …``)."""
from __future__ import annotations

import json
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ZTVIEWER_SHARED", REPO_ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"


def corpus_available() -> bool:
    return (CORPUS / "MANIFEST.json").is_file()


def corpus_manifest() -> list[dict]:
    if not corpus_available():
        return []
    return json.loads((CORPUS / "MANIFEST.json").read_text())["files"]


def hostile_entries() -> list[dict]:
    path = CORPUS / "hostile" / "HOSTILE.json"
    return json.loads(path.read_text()) if path.is_file() else []

