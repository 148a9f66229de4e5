"""The rules of zTensor v2 (spec Draft 4), one string each, as problems and errors name them.

Each string starts with the rule's short name, the one the upstream conformance corpus uses for the
violation (``cbor-determinism``, ``blob-overlap`` …), followed by the spec section and the rule itself,
so a message says both which check failed and where the spec states it.
"""
from __future__ import annotations

FILE_TOO_SMALL = "file-too-small (v2 §2.1): a file is at least 48 bytes, magic + footer"
HEADER_MAGIC = "header-magic (v2 §2.2): the file starts with 89 5A 54 32 0D 0A 1A 0A"
FOOTER_MAGIC = "footer-magic (v2 §2.3): the footer ends with the magic"
VERSION = "version (v2 §2.3): the footer version is 2"
MANIFEST_BOUNDS = "manifest-bounds (v2 §2.3, §7.2): the manifest lies inside the file, off the footer; " \
                  "a data shard's footer zeroes all three manifest fields"
MANIFEST_TOO_LARGE = "manifest-too-large (v2 §3.1): manifest_length <= 1 GiB"
MANIFEST_HASH = "manifest-hash (v2 §2.3): XXH3-64 of the manifest equals the footer's manifest_hash"
CBOR_SYNTAX = "cbor-syntax (v2 §3.1): well-formed CBOR with definite lengths, no tags, no trailing bytes"
CBOR_DETERMINISM = "cbor-determinism (v2 §3.1): RFC 8949 §4.2.1 deterministic encoding (shortest heads " \
                   "and floats, canonical NaN, bytewise-sorted map keys)"
CBOR_DUPLICATE_KEY = "cbor-duplicate-key (v2 §3.1): no map repeats a key"
CBOR_DEPTH = "cbor-depth (v2 §3.1): nesting at most 32 levels from the manifest root"
SCHEMA = "schema (v2 §3.2-§3.4): the manifest has the fields and types the schema defines"
NAME = "name (v2 §3.5): names are non-empty UTF-8 of at most 1024 bytes without U+0000"
SHAPE = "shape (v2 §3.3): rank <= 64 and the element count fits in u64"
BLOB_ALIGNMENT = "blob-alignment (v2 §2.4): every blob offset is a multiple of 4096 and >= 4096"
BLOB_BOUNDS = "blob-bounds (v2 §2.4): offset + length <= file size - 40"
BLOB_OVERLAP = "blob-overlap (v2 §2.4): blob references in one file are identical or disjoint"
SHARD_REF = "shard-ref (v2 §7.1): a part's shard is a key of the shard table"
SHARD_NAME = "shard-name (v2 §7.1): shard names are 1-64 bytes of A-Z a-z 0-9 . _ -, not starting with '.'"
LAYOUT_RULE = "layout-rule (v2 §5.2): the object satisfies its layout profile's metadata rules"
LAYOUT_DATA = "layout-data (v2 §5.2, App. A): the decoded data satisfies its layout and logical type rules"
DENSE_SIZE = "dense-size (v2 §5.1): a dense part's decoded size is size(type, product(shape))"
ENCODING = "encoding (v2 §5.3): the stored bytes follow their encoding profile"
DIGEST = "digest (v2 §3.4): the decoded bytes hash to the part's digest"
SHARD_IDENTITY = "shard-identity (v2 §7.1, §7.3): a resolved shard has the size and digest the root records"
PADDING = "padding (v2 §2.4): bytes between blobs are written as 0x00 (readers may ignore them)"
UNKNOWN_LAYOUT = "unknown-layout (v2 §5.2): an unknown layout is shown structurally, never interpreted"
UNKNOWN_TYPE = "unknown-type (v2 §4.2): a part of unknown logical type is refused, never reinterpreted"
UNKNOWN_ENCODING = "unknown-encoding (v2 §5.3): a part of unknown encoding is refused, never decoded"
OPAQUE_LAYOUT = "opaque-layout (v2 §5.2): a profile ztviewer validates but does not decode"
SHARD_MISSING = "shard-missing (v2 App. B): a shard resolves to <stem>-<name>.zt beside the root"
SHARD_OUTSIDE = "shard-outside (v2 §7.1): a shard is a regular file inside the root's folder"
GENERATION = "generations (v2 §2.5): the footer at EOF defines the file; earlier manifests are superseded"
