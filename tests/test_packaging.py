"""Issue 7: packaging files that cannot run here are checked structurally."""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import plistlib
import re
import sys
import tomllib

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


# -- one list of file types (ztviewer.file_types) for every platform ------------------------------------------
def test_every_platform_registers_the_types_of_the_one_list():
    import xml.etree.ElementTree as ET

    from ztviewer.codec.registry import builtin_formats
    from ztviewer.file_types import EXTENSIONS, FILE_TYPES, MIME_TYPES
    from ztviewer.paths import LINUX_DESKTOP

    assert set(EXTENSIONS) == {e.lstrip(".") for h in builtin_formats() for e in h.extensions}  # what the codec reads
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    xml = ET.parse(LINUX_DESKTOP / "ztviewer-mime.xml").getroot()
    linux = {t.get("type"): {g.get("pattern") for g in t.findall("m:glob", ns)} for t in xml.findall("m:mime-type", ns)}
    assert linux == {t.mime: set(t.globs) for t in FILE_TYPES}
    entry = (LINUX_DESKTOP / "ztviewer.desktop").read_text()
    assert f"MimeType={';'.join(MIME_TYPES)};" in entry.splitlines()
    plist = _document_types().info_plist(__version__)
    mac = {d["LSItemContentTypes"][0]: d["CFBundleTypeExtensions"] for d in plist["CFBundleDocumentTypes"]}
    assert mac == {f"org.ztviewer.{t.key}": [t.extension] for t in FILE_TYPES if t.extension}
    script = (PACKAGING / "windows" / "ztviewer.iss").read_text()
    windows = dict(re.findall(r'Subkey: "Software\\Classes\\\.([\w.]+)"; ValueType: string; ValueName: ""; '
                              r'ValueData: "([\w.-]+)"', script))
    assert windows == {t.extension: f"ztviewer.{t.key}" for t in FILE_TYPES if t.extension}
    content = dict(re.findall(r'Subkey: "Software\\Classes\\\.([\w.]+)"; ValueType: string; '
                              r'ValueName: "Content Type"; ValueData: "([\w/.-]+)"', script))
    assert content == {t.extension: t.mime for t in FILE_TYPES if t.extension}


def _associations():
    spec = importlib.util.spec_from_file_location("file_associations", PACKAGING.parent / "scripts" /
                                                  "file_associations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_desktop_association_files_are_the_ones_the_registry_writes():
    """Issue 25: the MIME XML, the .desktop MimeType line and the Windows [Registry] section are derived from the
    format registry; a hand edit (or a format added without regenerating them) fails here."""
    module = _associations()
    assert module.stale() == [], "run python scripts/file_associations.py"


def test_a_hand_written_association_is_caught(monkeypatch):
    module = _associations()
    xml = module.MIME_XML.read_text(encoding="utf-8")
    hand_edited = xml.replace("*.blz", "*.blz2")
    real_read = type(module.MIME_XML).read_text
    monkeypatch.setattr(type(module.MIME_XML), "read_text",
                        lambda self, *a, **k: hand_edited if self == module.MIME_XML else real_read(self, *a, **k))
    assert module.stale() == [module.MIME_XML]


def test_a_new_format_spec_reaches_every_association(monkeypatch):
    from ztviewer.codec.format_spec import FormatSpec
    from ztviewer.codec.formats import builtin

    toy = FormatSpec(name="toy", description="Toy tensors", extensions=(".toy",), mime="application/x-toy",
                     sniff=lambda probe: False, read="toy:read", file_type_description="toy tensor file")
    import ztviewer.file_types as file_types

    types = file_types.format_types(builtin.BUILTIN_FORMATS + (toy,))
    monkeypatch.setattr(file_types, "FILE_TYPES", types + file_types.SET_TYPES)
    module = _associations()
    assert '<mime-type type="application/x-toy">' in module.mime_xml()
    assert 'Subkey: "Software\\Classes\\.toy"' in module.inno_registry(module.INNO.read_text(encoding="utf-8"))
    assert "application/x-toy;" in module.desktop_entry(module.DESKTOP.read_text(encoding="utf-8"))


# -- the test extra installs what the tests need ---------------------------------------------------------------
ROOT = PACKAGING.parent


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def test_every_module_a_test_skips_without_is_in_the_test_extra():
    """A test that skips without a module never runs in CI unless `.[test]` installs it (issue 31: pyarrow)."""
    extra = {_requirement_name(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())
             ["project"]["optional-dependencies"]["test"]}
    skipped_without = {m.split(".")[0] for path in (ROOT / "tests").rglob("*.py")
                       for m in re.findall(r"importorskip\(\"([\w.]+)\"", path.read_text(encoding="utf-8"))}
    assert "pyarrow" in skipped_without
    distributions = importlib.metadata.packages_distributions()
    missing = {m for m in skipped_without - set(sys.stdlib_module_names)
               if not {d.lower() for d in distributions.get(m, [m])} & extra}
    assert not missing, f"tests skip without {sorted(missing)}, which .[test] does not install"


# -- README says what installing and testing take -----------------------------------------------------------------
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_readme_test_recipe_installs_what_ci_installs():
    """`.ci/run` "runs exactly these commands": the recipe's apt line names every package CI installs, else the
    desktop-integration and GUI tests skip for a newcomer."""
    ci = (ROOT / ".ci" / "run").read_text()
    ci_packages = set(re.search(r"for pkg in (.*?); do", ci, re.S).group(1).replace("\\\n", " ").split())
    recipe = README.split("## Fresh machine: install, check and run the tests", 1)[1].split("```", 2)[1]
    apt = re.search(r"apt-get install (.*?)#", recipe, re.S)
    assert apt, "the test recipe has no apt-get line"
    assert set(apt.group(1).replace("\\\n", " ").split()) == ci_packages


def test_readme_installs_from_a_checkout_while_nothing_is_published():
    assert "pipx install ztviewer" not in README and "pip install ztviewer" not in README
    assert "pipx install ." in README


def test_the_long_description_shows_no_image_a_package_index_cannot_find():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / project["readme"]).read_text(encoding="utf-8")
    assert not re.findall(r"\]\((?!https?://)", text), "relative links or images in the long description"
    assert "pipx install ." in text
