"""Issue 7: packaging files that cannot run here are checked structurally."""
from __future__ import annotations

import ast
import importlib.util
import plistlib
import re

from ztviewer import __version__
from ztviewer.paths import LINUX_DESKTOP

PACKAGING = LINUX_DESKTOP.parents[2] / "packaging"
EXTENSIONS = {"zt", "safetensors", "blz"}


def _document_types():
    spec = importlib.util.spec_from_file_location("document_types", PACKAGING / "macos" / "document_types.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_info_plist_round_trips_and_declares_the_three_types():
    plist = _document_types().info_plist(__version__)
    parsed = plistlib.loads(plistlib.dumps(plist))
    assert parsed["CFBundleShortVersionString"] == __version__
    doc_exts = {ext for d in parsed["CFBundleDocumentTypes"] for ext in d["CFBundleTypeExtensions"]}
    assert doc_exts == EXTENSIONS
    exported = {t["UTTypeIdentifier"]: t for t in parsed["UTExportedTypeDeclarations"]}
    for d in parsed["CFBundleDocumentTypes"]:
        for uti in d["LSItemContentTypes"]:
            assert uti in exported
    ut_exts = {e for t in exported.values() for e in t["UTTypeTagSpecification"]["public.filename-extension"]}
    assert ut_exts == EXTENSIONS


def test_pyinstaller_spec_is_valid_python_and_bundles_resources():
    source = (PACKAGING / "pyinstaller" / "ztviewer.spec").read_text()
    tree = ast.parse(source)
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"} <= calls
    assert '"resources"' in source and "info_plist" in source


def test_inno_setup_registers_every_extension():
    script = (PACKAGING / "windows" / "ztviewer.iss").read_text()
    assert "ChangesAssociations=yes" in script
    for ext in EXTENSIONS:
        assert re.search(rf'Subkey: "Software\\Classes\\\.{ext}"; ValueType: string; ValueName: ""', script), ext
        progid = f"ztviewer.{'ztensor' if ext == 'zt' else ext}"
        assert f'Subkey: "Software\\Classes\\{progid}\\shell\\open\\command"' in script
        assert '""%1""' in script
