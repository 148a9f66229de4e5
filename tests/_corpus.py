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


def listed_dtype(tensor: dict) -> str:
    """The dtype ztviewer lists for a MANIFEST.json tensor: its ``dtype``, except that a float8 logical type is
    listed as such (MANIFEST records the uint8 storage ztensor 1.2.x hands back, with the meaning in
    ``logical_type``), as safetensors F8_E4M3 / F8_E5M2 are."""
    logical = tensor.get("logical_type", "")
    return {"f8_e4m3fn": "float8_e4m3fn", "f8_e5m2": "float8_e5m2"}.get(logical, tensor["dtype"])


def hostile_entries() -> list[dict]:
    path = CORPUS / "hostile" / "HOSTILE.json"
    return json.loads(path.read_text()) if path.is_file() else []

