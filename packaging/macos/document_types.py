"""macOS bundle metadata (Info.plist) for the file types in ``ztviewer.file_types`` — the one list every
platform registers (used by the PyInstaller spec; tested against that list). macOS associates by extension, so
only the types with one are declared."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ztviewer.file_types import FILE_TYPES

BUNDLE_ID = "org.ztviewer.ztviewer"

DOCUMENT_TYPES = [
    {"CFBundleTypeName": t.description, "CFBundleTypeRole": "Editor",
     "LSHandlerRank": "Owner" if t.owner else "Default",
     "LSItemContentTypes": [f"org.ztviewer.{t.key}"], "CFBundleTypeExtensions": [t.extension]}
    for t in FILE_TYPES if t.extension
]

EXPORTED_TYPES = [
    {"UTTypeIdentifier": f"org.ztviewer.{t.key}", "UTTypeDescription": t.description,
     "UTTypeConformsTo": ["public.data"],
     "UTTypeTagSpecification": {"public.filename-extension": [t.extension], "public.mime-type": [t.mime]}}
    for t in FILE_TYPES if t.extension
]


def info_plist(version: str) -> dict:
    return {
        "CFBundleName": "ztviewer",
        "CFBundleDisplayName": "ztviewer",
        "CFBundleIdentifier": BUNDLE_ID,
        "CFBundleShortVersionString": version,
        "CFBundleVersion": version,
        "NSHighResolutionCapable": True,
        "LSMinimumSystemVersion": "11.0",
        "CFBundleDocumentTypes": DOCUMENT_TYPES,
        "UTExportedTypeDeclarations": EXPORTED_TYPES,
    }
