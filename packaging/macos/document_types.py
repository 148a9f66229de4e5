"""macOS bundle metadata for the three file types (used by the PyInstaller spec; tested structurally)."""

BUNDLE_ID = "org.ztviewer.ztviewer"

DOCUMENT_TYPES = [
    {"CFBundleTypeName": "zTensor file", "CFBundleTypeRole": "Editor", "LSHandlerRank": "Owner",
     "LSItemContentTypes": ["org.ztviewer.ztensor"], "CFBundleTypeExtensions": ["zt"]},
    {"CFBundleTypeName": "safetensors file", "CFBundleTypeRole": "Editor", "LSHandlerRank": "Default",
     "LSItemContentTypes": ["org.ztviewer.safetensors"], "CFBundleTypeExtensions": ["safetensors"]},
    {"CFBundleTypeName": "BLZ tensor-train file", "CFBundleTypeRole": "Editor", "LSHandlerRank": "Owner",
     "LSItemContentTypes": ["org.ztviewer.blz"], "CFBundleTypeExtensions": ["blz"]},
]

EXPORTED_TYPES = [
    {"UTTypeIdentifier": "org.ztviewer.ztensor", "UTTypeDescription": "zTensor file",
     "UTTypeConformsTo": ["public.data"],
     "UTTypeTagSpecification": {"public.filename-extension": ["zt"], "public.mime-type": ["application/x-ztensor"]}},
    {"UTTypeIdentifier": "org.ztviewer.safetensors", "UTTypeDescription": "safetensors file",
     "UTTypeConformsTo": ["public.data"],
     "UTTypeTagSpecification": {"public.filename-extension": ["safetensors"],
                                "public.mime-type": ["application/x-safetensors"]}},
    {"UTTypeIdentifier": "org.ztviewer.blz", "UTTypeDescription": "BLZ tensor-train file",
     "UTTypeConformsTo": ["public.data"],
     "UTTypeTagSpecification": {"public.filename-extension": ["blz"],
                                "public.mime-type": ["application/x-blz-tensor-train"]}},
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
