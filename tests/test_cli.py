"""CLI behaviour: exit codes, usage errors, export, text output — never a traceback."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_available
from ztviewer.cli import main

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
DTYPES_ZT = CORPUS / "zt_v1.0" / "ztensor-1.0.1" / "dtypes_2d.zt"
EXTRA_ST = CORPUS / "safetensors" / "safetensors-0.8.0" / "dtypes_2d.safetensors"


def test_missing_path_is_a_usage_error(capsys, tmp_path):
    assert main(["check", str(tmp_path / "nope.zt")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_directory_without_a_tensor_set_is_a_usage_error(capsys, tmp_path):
    assert main(["check", str(tmp_path)]) in (1, 2)
    assert "Traceback" not in capsys.readouterr().err


def test_bad_arguments_exit_2(capsys):
    assert main(["info"]) == 2
    assert main(["export", "x.zt"]) == 2


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "info" in capsys.readouterr().out


def test_unknown_format_is_reported_not_raised(capsys, tmp_path):
    path = tmp_path / "junk.zt"
    path.write_bytes(b"hello world, not a tensor file")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "error:" in out and "ZTEN" in out


def test_process_never_prints_a_traceback(tmp_path):
    path = tmp_path / "junk.safetensors"
    path.write_bytes(b"\xff" * 64)
    proc = subprocess.run([sys.executable, "-m", "ztviewer", "check", str(path)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr


@needs_corpus
def test_info_text_lists_tensors_and_components(capsys):
    assert main(["info", str(DTYPES_ZT)]) == 0
    out = capsys.readouterr().out
    assert "zt v1.0" in out
    assert "data: @64 +" in out


def test_info_json_tags_values_json_cannot_hold(tmp_path, capsys):
    from tests.codec.formats.zt_builders import zt_bytes

    attributes = {"nan": float("nan"), "text": "nan", "up": float("inf"), "down": -float("inf"), "raw": b"\x00\xff"}
    data = {"data": {"dtype": "u8", "offset": 64, "length": 1}}
    manifest = {"version": "1.2.0",
                "objects": {"w": {"shape": [1], "format": "dense", "attributes": attributes, "components": data}}}
    path = tmp_path / "a.zt"
    path.write_bytes(zt_bytes(b"ZTEN1000", manifest, {64: b"\x07"}, objects=True))
    assert main(["info", "--json", str(path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tensors"][0]["attributes"] == {"nan": {"float": "nan"}, "text": "nan", "up": {"float": "inf"},
                                               "down": {"float": "-inf"}, "raw": {"bytes_hex": "00ff"}}


def test_float8_of_the_objects_layout_is_listed_and_exported_as_float8(tmp_path, capsys):
    from tests.codec.formats.zt_builders import zt_bytes

    def f8(logical: str, offset: int) -> dict:
        return {"shape": [3], "format": "dense",
                "components": {"data": {"dtype": "u8", "type": logical, "offset": offset, "length": 3}}}

    manifest = {"version": "1.2.0", "objects": {"e4m3": f8("f8_e4m3fn", 64), "e5m2": f8("f8_e5m2", 128)}}
    path = tmp_path / "f8.zt"
    path.write_bytes(zt_bytes(b"ZTEN1000", manifest, {64: bytes([0x38, 0x40, 0xB8]), 128: bytes([0x3C, 0x40, 0xC0])},
                              objects=True))
    assert main(["info", "--json", str(path)]) == 0
    listed = {t["name"]: t["dtype"] for t in json.loads(capsys.readouterr().out)["tensors"]}
    assert listed == {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
    for name, values in (("e4m3", [1.0, 2.0, -1.0]), ("e5m2", [1.0, 2.0, -2.0])):
        assert main(["export", str(path), name, "-o", str(tmp_path / "v.npy")]) == 0
        exported = np.load(tmp_path / "v.npy")
        assert exported.dtype == np.float32 and exported.tolist() == values
        assert main(["export", str(path), name, "--raw", "-o", str(tmp_path / "raw.npy")]) == 0
        assert np.load(tmp_path / "raw.npy").dtype == np.uint8


@needs_corpus
def test_export_bfloat16_as_float32_and_raw(tmp_path, capsys):
    doc_code = main(["info", "--json", str(EXTRA_ST)])
    doc = json.loads(capsys.readouterr().out)
    assert doc_code == 0
    bf16 = next(t for t in doc["tensors"] if t["dtype"] == "bfloat16")
    out, raw = tmp_path / "a.npy", tmp_path / "b.npy"
    assert main(["export", str(EXTRA_ST), bf16["name"], "-o", str(out)]) == 0
    assert main(["export", str(EXTRA_ST), bf16["name"], "-o", str(raw), "--raw"]) == 0
    values, bits = np.load(out), np.load(raw)
    assert values.dtype == np.float32 and bits.dtype == np.uint16
    assert np.array_equal(values.view(np.uint32) >> 16, bits.astype(np.uint32))


@needs_corpus
def test_export_unknown_tensor_is_a_usage_error(tmp_path, capsys):
    assert main(["export", str(DTYPES_ZT), "no_such_tensor", "-o", str(tmp_path / "x.npy")]) == 2
    assert "no tensor named" in capsys.readouterr().err


@needs_corpus
def test_convert_keeps_content_hashes_across_formats(tmp_path, capsys):
    source = CORPUS / "zt_v0.1" / "ztensor-0.1.4" / "dtypes_2d.zt"
    target = tmp_path / "out.safetensors"
    assert main(["convert", str(source), str(target), "--digest", "none"]) == 0
    capsys.readouterr()
    main(["info", "--json", "--hash", str(source)])
    before = {t["name"]: t["sha256"] for t in json.loads(capsys.readouterr().out)["tensors"]}
    main(["info", "--json", "--hash", str(target)])
    after_doc = json.loads(capsys.readouterr().out)
    assert after_doc["format"] == "safetensors"
    assert {t["name"]: t["sha256"] for t in after_doc["tensors"]} == before


@needs_corpus
def test_convert_refuses_sparse_to_safetensors_without_densify(tmp_path, capsys):
    source = CORPUS / "zt_v1.0" / "ztensor-1.0.1" / "sparse.zt"
    assert main(["convert", str(source), str(tmp_path / "x.safetensors")]) == 1
    err = capsys.readouterr().err
    assert "densify" in err
    assert not (tmp_path / "x.safetensors").exists()
    assert main(["convert", str(source), str(tmp_path / "x.safetensors"), "--densify"]) == 0


@needs_corpus
def test_convert_with_zstd_and_digests_checks_clean(tmp_path, capsys):
    target = tmp_path / "c.zt"
    assert main(["convert", str(DTYPES_ZT), str(target), "--to", "zt-v1.0", "--compress", "zstd:5",
                 "--digest", "sha256"]) == 0
    capsys.readouterr()
    main(["info", "--json", str(target)])
    doc = json.loads(capsys.readouterr().out)
    components = [c for t in doc["tensors"] for c in t["components"] if c["length"]]
    assert components and all(c["encoding"] == "zstd" and c["digest"].startswith("sha256:") for c in components)
    assert main(["check", str(target)]) == 0


def test_edit_sets_and_deletes_attributes_and_renames(tmp_path, capsys):
    import safetensors.numpy

    path = tmp_path / "m.safetensors"
    safetensors.numpy.save_file({"a": np.arange(6, dtype=np.float32), "b": np.ones(2, np.int8)}, str(path),
                                metadata={"keep": "1", "drop": "2"})
    out = tmp_path / "edited.safetensors"
    assert main(["edit", str(path), "--set-attr", "license=MIT", "--del-attr", "drop", "--rename", "a=alpha",
                 "--delete", "b", "-o", str(out)]) == 0
    loaded = safetensors.numpy.load_file(str(out))
    assert list(loaded) == ["alpha"] and np.array_equal(loaded["alpha"], np.arange(6, dtype=np.float32))
    with safetensors.safe_open(str(out), "np") as f:
        assert f.metadata() == {"keep": "1", "license": "MIT"}
    assert path.read_bytes() != out.read_bytes()


def test_edit_compact_does_what_its_help_says(tmp_path, capsys):
    from ztviewer.codec.arrays import save_arrays
    from ztviewer.codec.model import SEEKABLE_ENCODING
    from ztviewer.codec.registry import open_file

    assert main(["edit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "earlier generations go" in text and "every part keeps its encoding and digest: zstd parts stay zstd" in text
    plain, path = tmp_path / "plain.zt", tmp_path / "z.zt"
    save_arrays(plain, {"w": np.arange(5000, dtype=np.float32)}, to="zt-v2")
    assert main(["convert", str(plain), str(path), "--to", "zt-v2", "--compress", "zstd"]) == 0
    assert main(["edit", str(path), "--set-attr", "a=1", "--in-place"]) == 0
    with open_file(path) as tf:
        assert tf.extra["_generations"] and tf.tensor("w").components["data"].encoding == SEEKABLE_ENCODING
        digest = tf.tensor("w").components["data"].digest
    assert main(["edit", str(path), "--set-attr", "a=2", "--in-place", "--compact"]) == 0
    with open_file(path) as tf:
        data = tf.tensor("w").components["data"]
        assert not tf.extra["_generations"] and tf.attributes == {"a": "2"}
        assert (data.encoding, data.digest, data.offset) == (SEEKABLE_ENCODING, digest, 65536)


def test_edit_refusal_is_a_clear_error(tmp_path, capsys):
    import safetensors.numpy

    path = tmp_path / "m.safetensors"
    safetensors.numpy.save_file({"a": np.zeros(2, np.float32)}, str(path))
    before = path.read_bytes()
    assert main(["edit", str(path), "--set-attr-json", "n=3", "--in-place"]) == 1
    assert "string" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_edit_without_changes_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "m.zt"
    path.write_bytes(b"x")
    assert main(["edit", str(path), "--in-place"]) == 2


# -- one set of exit statuses (issue 31): 0 sound, 1 problems found, 2 usage or unreadable input -------------------
def _inputs(tmp_path):
    import safetensors.numpy

    good = tmp_path / "good.safetensors"
    safetensors.numpy.save_file({"a": np.arange(3, dtype=np.float32)}, str(good))
    return good


def _argv(command, path, tmp_path):
    out = str(tmp_path / "out.zt")
    return {"info": ["info", path], "check": ["check", path], "export": ["export", path, "a", "-o", out + ".npy"],
            "convert": ["convert", path, out], "edit": ["edit", path, "--set-attr", "k=v", "-o", out],
            "diff": ["diff", path, path]}[command]


COMMANDS = ["info", "check", "export", "convert", "edit", "diff"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_exits_2_for_a_missing_or_unreadable_input_or_a_folder_without_a_set(
        command, tmp_path, capsys, monkeypatch):
    import ztviewer.codec.portable as portable

    good = _inputs(tmp_path)
    assert main(_argv(command, str(good), tmp_path)) in (0, 1)      # the arguments themselves are sound
    capsys.readouterr()
    assert main(_argv(command, str(tmp_path / "missing.safetensors"), tmp_path)) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(_argv(command, str(tmp_path / "empty"), tmp_path)) == 2
    said = capsys.readouterr().err      # edit opens single files only
    assert ("a folder, not a regular file" if command == "edit" else "folder without a tensor set") in said
    open_regular = portable.open_regular

    def denied(path, *args, **kwargs):
        if str(path).endswith("good.safetensors"):
            raise PermissionError(13, "Permission denied", str(path))
        return open_regular(path, *args, **kwargs)

    monkeypatch.setattr(portable, "open_regular", denied)    # as chmod 000 does for anyone but root
    assert main(_argv(command, str(good), tmp_path)) == 2
    err = capsys.readouterr().err
    assert f"Permission denied: {good}" in err and "Traceback" not in err
    assert main([command, "--no-such-option"]) == 2


@pytest.mark.parametrize("command", ["export", "convert", "edit"])
def test_writing_into_a_missing_folder_names_the_folder(command, tmp_path, capsys):
    good = _inputs(tmp_path)
    argv = _argv(command, str(good), tmp_path / "nowhere")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"no such folder to write into: {tmp_path / 'nowhere'}" in err
    assert "ztviewer-tmp" not in err


def test_help_of_a_command_is_its_own_usage(capsys):
    assert main(["info", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ztviewer info [-h] [--json] [--hash] file\n")
    assert "--install-desktop" not in out and "COMMAND" not in out
    assert main(["convert", "x"]) == 2
    assert capsys.readouterr().err.startswith("usage: ztviewer convert [-h]")


def test_help_documents_the_exit_statuses_and_the_zt_default(capsys):
    from ztviewer.cli_common import EXIT_STATUSES

    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert EXIT_STATUSES in out
    assert "convert writes .zt output as zt-v2" in out


def test_an_unknown_command_is_refused_but_an_existing_file_opens_the_window(tmp_path, capsys, monkeypatch):
    import ztviewer.launch as launch

    opened = []
    monkeypatch.setattr(launch, "launch_gui", lambda argv: opened.append(list(argv)) or 0)
    monkeypatch.chdir(tmp_path)
    assert main(["inf", "x"]) == 2
    assert "unknown command 'inf' (did you mean info?)" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2
    assert "'frobnicate' is neither a command" in capsys.readouterr().err
    assert opened == []
    (tmp_path / "inf").write_bytes(b"a file named like a command's misspelling")
    assert main(["inf"]) == 0 and main(["missing.zt"]) == 0     # the window says what it cannot open
    assert opened == [["inf"], ["missing.zt"]]


# -- .zt output is zTensor v2 unless --to says otherwise ----------------------------------------------------------
def test_convert_to_a_zt_path_writes_v2_and_zt_v1_0_on_request(tmp_path, capsys):
    import ztensor

    from ztviewer.codec.multifile import open_path

    good = _inputs(tmp_path)
    assert main(["convert", str(good), str(tmp_path / "new.zt")]) == 0
    assert "(zt-v2, " in capsys.readouterr().out
    with open_path(tmp_path / "new.zt") as tf:
        assert (tf.format, tf.kind) == ("zt-v2", "zt-v2")
    ztensor.verify(str(tmp_path / "new.zt"), deep=True)                          # what ztensor 2.x reads
    assert ztensor.open(str(tmp_path / "new.zt"))["a"].tobytes() == np.arange(3, dtype=np.float32).tobytes()
    assert main(["convert", str(good), str(tmp_path / "old.zt"), "--to", "zt-v1.0"]) == 0
    with open_path(tmp_path / "old.zt") as tf:
        assert tf.kind == "zt v1.0"
    assert main(["convert", str(good), str(tmp_path / "x.zt"), "--to", "zt"]) == 2     # which generation? say it
    assert "invalid choice: 'zt'" in capsys.readouterr().err


def test_counts_and_kinds_read_as_english(tmp_path, capsys):
    good = _inputs(tmp_path)
    assert main(["check", str(good)]) == 0
    assert "1 tensor, 1 decoded, 0 digests verified, 0 errors, 0 warnings" in capsys.readouterr().out
    assert main(["diff", str(good), str(good)]) == 0
    assert "\n1 tensor: 1 identical bytes; same content" in capsys.readouterr().out
    assert main(["edit", str(good), "--set-attr", "k=v", "-o", str(tmp_path / "e.safetensors")]) == 0
    assert capsys.readouterr().out.endswith(": 1 edit\n")
    assert main(["convert", str(good), str(tmp_path / "v2.zt")]) == 0
    capsys.readouterr()
    assert main(["info", str(tmp_path / "v2.zt")]) == 0
    head = capsys.readouterr().out.split("tensors:")[0]
    assert head.startswith(f"{tmp_path / 'v2.zt'}: zt-v2, ") and "v2 v2" not in head
    assert head.count("sha256:") == 1, head      # the content id once, not again as a format field


# -- README's command block is the live --help ---------------------------------------------------------------------
def test_readme_command_block_is_what_help_prints():
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scripts" / "readme_commands.py"
    spec = importlib.util.spec_from_file_location("readme_commands", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = module.README.read_text(encoding="utf-8")
    assert module.command_block(readme) == module.live_help(), \
        "README's command block is not ztviewer --help: run python scripts/readme_commands.py"
