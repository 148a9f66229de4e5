"""Issue 2 acceptance: every valid corpus file decodes to exactly what MANIFEST.json says."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_available, corpus_manifest, listed_dtype
from ztviewer.cli import main

pytestmark = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")

ENTRIES = corpus_manifest()
READABLE = ENTRIES
V2 = [e for e in ENTRIES if e["path"].startswith("zt_v2/")]


def info_json(capsys, path) -> dict:
    code = main(["info", "--json", "--hash", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize("entry", [e for e in READABLE if e["format"] != "blz"], ids=lambda e: e["path"])
def test_info_lists_exactly_the_manifest_tensors(entry, capsys):
    doc = info_json(capsys, CORPUS / entry["path"])
    got = [(t["name"], t["dtype"], t["shape"]) for t in doc["tensors"]]
    want = [(t["name"], listed_dtype(t), t["shape"]) for t in entry["tensors"]]
    assert sorted(got) == sorted(want)
    hashes = {t["name"]: t["sha256"] for t in doc["tensors"]}
    for t in entry["tensors"]:
        assert hashes[t["name"]] == t["sha256"], t["name"]
    assert not any(p["severity"] == "error" for p in doc["problems"])


@pytest.mark.parametrize("entry", [e for e in READABLE if e["format"] == "blz"], ids=lambda e: e["path"])
def test_blz_export_reconstructs_within_tolerance(entry, capsys, tmp_path):
    doc = info_json(capsys, CORPUS / entry["path"])
    (tensor,) = entry["tensors"]
    assert [(t["name"], t["dtype"], t["shape"]) for t in doc["tensors"]] == [
        (tensor["name"], tensor["dtype"], tensor["shape"])]
    out = tmp_path / "x.npy"
    assert main(["export", str(CORPUS / entry["path"]), tensor["name"], "-o", str(out)]) == 0
    reconstructed = np.load(out)
    reference = np.load(CORPUS / entry["dense_reference"])
    assert reconstructed.shape == reference.shape
    error = np.linalg.norm(reconstructed - reference) / np.linalg.norm(reference)
    assert error <= entry["expected_rel_error_max"]


@pytest.mark.parametrize("entry", V2, ids=lambda e: e["path"])
def test_zt_v2_is_read(entry, capsys):
    code = main(["info", "--json", str(CORPUS / entry["path"])])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["format"] == "zt-v2" and doc["readable"] is True and not doc["problems"]
    assert sorted(t["name"] for t in doc["tensors"]) == sorted(t["name"] for t in entry["tensors"])


@pytest.mark.parametrize("entry", READABLE, ids=lambda e: e["path"])
def test_check_passes_on_every_valid_file(entry, capsys):
    code = main(["check", str(CORPUS / entry["path"])])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "error:" not in out
