"""Save As of a damaged file refuses with the same message as ``convert``: tensor, component, offset and rule, and
nothing is written (never a file that looks sound)."""
from __future__ import annotations

import shutil

import pytest

from tests._corpus import SHARED
from tests.gui.test_edit_attributes import opened

VECTOR = SHARED / "ref" / "ztensor-v2-conformance" / "reject" / "verify-digest-mismatch.zt"


@pytest.mark.skipif(not VECTOR.is_file(), reason=f"no conformance vector {VECTOR}")
def test_save_as_of_a_wrong_digest_says_which_tensor_and_rule(qtbot, window, tmp_path):
    src = tmp_path / "damaged.zt"
    shutil.copyfile(VECTOR, src)
    _view, _session = opened(qtbot, window, src)
    dialog = window.editing.save_as()
    out = tmp_path / "out.safetensors"
    dialog.path_edit.setText(str(out))
    assert dialog.format_combo.currentData() == "safetensors" and dialog.can_save()
    dialog.accept()
    qtbot.waitUntil(lambda: window.last_error.startswith(f"Could not save {out}"), timeout=15_000)
    assert "tensor 't', component 'data', at byte 4096" in window.last_error
    assert "the file records 0000000000000000" in window.last_error and "cannot be written" in window.last_error
    assert not out.exists()
