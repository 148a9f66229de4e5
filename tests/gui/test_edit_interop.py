"""Files saved from the app are read by the reference libraries: ztensor (its own venvs, built by
tests/interop/conftest.py; skipped with pip's reason when they cannot be made). HF safetensors: test_edit_save."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened  # noqa: F401
from tests.gui.test_edit_save import edit_objects_file, wait_saved

INTEROP = Path(__file__).resolve().parents[1] / "interop" / "conftest.py"


def run_reference(version, paths):
    spec = importlib.util.spec_from_file_location("ztviewer_interop_conftest", INTEROP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_reference(version, paths)


@pytest.mark.parametrize("target, version", [("zt-v1.0", "1.0.1"), ("zt-objects", "1.2.3"), ("zt-v0.1", "0.1.4")])
def test_ztensor_reads_app_saved_file(qtbot, window, tmp_path, target, version):
    view, _session = opened(qtbot, window, make_file(tmp_path, "zt-objects", "src.zt"))
    edit_objects_file(window, view)
    if target == "zt-v0.1":
        view.select_item(None)
        window.editing.editor.model.remove([0, 1])
    out = tmp_path / f"out-{target}.zt"
    dialog = window.editing.save_as()
    dialog.path_edit.setText(str(out))
    dialog.set_options(target, encoding="zstd", digest="crc32c")
    assert dialog.can_save(), dialog.message.text()
    dialog.accept()
    wait_saved(qtbot, window, out, view)
    result = run_reference(version, [out])[str(out)]
    assert "error" not in result, result
    tensors = {t["name"]: t for t in result["tensors"]}
    assert set(tensors) == {"a", "bias"}
    if "attributes" in tensors["a"]:       # the 1.0.1 reader script does not report attributes
        assert tensors["a"]["attributes"].get("origin") == "app", tensors["a"]
