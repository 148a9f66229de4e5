"""Write the desktop-association files from ``ztviewer.file_types`` (derived from the format registry): the
shared-mime-info XML, the ``.desktop`` entry's ``MimeType`` line and the Windows installer's ``[Registry]``
section. (macOS's Info.plist is built from the same list by ``packaging/macos/document_types.py``.)

Run ``python scripts/file_associations.py`` after adding a format; ``--check`` only says whether the files are
up to date (exit status 1 when they are not; tests/test_packaging.py runs it).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parents[1]
MIME_XML = ROOT / "ztviewer" / "resources" / "linux" / "ztviewer-mime.xml"
DESKTOP = ROOT / "ztviewer" / "resources" / "linux" / "ztviewer.desktop"
INNO = ROOT / "packaging" / "windows" / "ztviewer.iss"
_REGISTRY = re.compile(r"(\[Registry\]\n)(.*?)(\n\[)", re.S)


def _types():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT))
    from ztviewer.file_types import FILE_TYPES

    return FILE_TYPES


def mime_xml() -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<mime-info xmlns="http://www.freedesktop.org/standards/shared-mime-info">']
    for t in _types():
        lines.append(f"  <mime-type type={quoteattr(t.mime)}>")
        lines.append(f"    <comment>{escape(t.description)}</comment>")
        if t.parent:
            lines.append(f"    <sub-class-of type={quoteattr(t.parent)}/>")
        lines.append('    <generic-icon name="ztviewer"/>')
        if t.magic:
            lines.append(f'    <magic priority="{t.magic_priority}">')
            lines += [f"      {m}" for m in t.magic]
            lines.append("    </magic>")
        weight = f' weight="{t.glob_weight}"' if t.glob_weight is not None else ""
        lines += [f"    <glob pattern={quoteattr(g)}{weight}/>" for g in t.globs]
        lines.append("  </mime-type>")
    lines.append("</mime-info>")
    return "\n".join(lines) + "\n"


def desktop_entry(current: str) -> str:
    line = "MimeType=" + "".join(f"{t.mime};" for t in _types())
    return re.sub(r"^MimeType=.*$", line, current, count=1, flags=re.M)


def inno_registry(current: str) -> str:
    lines = ["; One ProgID per format; each extension points at its ProgID."]
    for t in _types():
        if not t.extension:
            continue
        classes, progid = "Software\\Classes", f"ztviewer.{t.key}"
        lines += [
            f'Root: HKA; Subkey: "{classes}\\.{t.extension}"; ValueType: string; ValueName: ""; '
            f'ValueData: "{progid}"; Flags: uninsdeletevalue',
            f'Root: HKA; Subkey: "{classes}\\.{t.extension}"; ValueType: string; ValueName: "Content Type"; '
            f'ValueData: "{t.mime}"',
            f'Root: HKA; Subkey: "{classes}\\{progid}"; ValueType: string; ValueName: ""; '
            f'ValueData: "{t.description}"; Flags: uninsdeletekey',
            f'Root: HKA; Subkey: "{classes}\\{progid}\\DefaultIcon"; ValueType: string; ValueName: ""; '
            'ValueData: "{app}\\ztviewer.exe,0"',
            f'Root: HKA; Subkey: "{classes}\\{progid}\\shell\\open\\command"; ValueType: string; ValueName: ""; '
            'ValueData: """{app}\\ztviewer.exe"" ""%1"""',
            "",
        ]
    block = "\n".join(lines)
    if not _REGISTRY.search(current):
        raise ValueError(f"{INNO} has no [Registry] section followed by another section")
    return _REGISTRY.sub(lambda m: m.group(1) + block + m.group(3), current, count=1)


def expected() -> dict[Path, str]:
    return {MIME_XML: mime_xml(), DESKTOP: desktop_entry(DESKTOP.read_text(encoding="utf-8")),
            INNO: inno_registry(INNO.read_text(encoding="utf-8"))}


def stale() -> list[Path]:
    """The files that differ from what this script writes."""
    return [path for path, text in expected().items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        found = stale()
        print("desktop associations are up to date" if not found else
              "written by hand or out of date (run python scripts/file_associations.py): "
              + ", ".join(str(p.relative_to(ROOT)) for p in found))
        return 1 if found else 0
    for path, text in expected().items():
        path.write_text(text, encoding="utf-8", newline="\n")
    print("wrote " + ", ".join(str(p.relative_to(ROOT)) for p in expected()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
