"""Issue 16 §10: a file truncated by another program while it is open and mapped. Verification, hashing and
export read with positional reads or check the file before touching the map, so the process gets a clean
``SourceChanged`` — never SIGBUS, never a digest over bytes that are gone. Each case runs in a child process
(SIGBUS would kill it); the truncation is done in that process through a second handle, no other program."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zstandard

from tests.hostile_values import V1, cbor_map, enc, v10, zt_file

N = 4 << 20  # float32 elements per tensor: 16 MiB each


def two_tensors(path: Path) -> None:
    """``raw`` (16 MiB, crc32c) then ``packed`` (zstd, 16 MiB decoded) in a v1.0 file."""
    import crc32c

    raw = np.arange(N, dtype="<f4").tobytes()
    frame = zstandard.ZstdCompressor(level=1).compress(raw)
    pad = -(-len(raw) // 64) * 64
    tensors = cbor_map([
        (enc("raw"), cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc([N])), (enc("format"), enc("dense")),
                               (enc("components"), cbor_map([(enc("data"), cbor_map([
                                   (enc("offset"), enc(64)), (enc("length"), enc(len(raw))),
                                   (enc("digest"), enc(f"crc32c:0x{crc32c.crc32c(raw):08X}"))]))]))])),
        (enc("packed"), cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc([N])),
                                  (enc("format"), enc("dense")),
                                  (enc("components"), cbor_map([(enc("data"), cbor_map([
                                      (enc("offset"), enc(64 + pad)), (enc("length"), enc(len(frame))),
                                      (enc("encoding"), enc("zstd"))]))]))])),
    ])
    path.write_bytes(zt_file(V1, v10(tensors), raw + bytes(pad - len(raw)) + frame))


_CHILD = """
import sys
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import CodecError
from ztviewer.codec.multifile import open_path

path, action = sys.argv[1], sys.argv[2]
tf = open_path(path)
raw, packed = tf.tensor("raw"), tf.tensor("packed")
assert to_dense(tf, raw)[-1] == float(raw.numel - 1)  # the whole file is mapped and read once
with open(path, "r+b") as other:  # another handle truncates it under the map
    other.truncate(4096)
try:
    if action == "check":
        report = check_file(tf)
        print("PROBLEMS", [p.message for p in report.problems])
    elif action == "hash":
        for t in (raw, packed):
            try:
                print("HASH", content_sha256(tf, t))
            except CodecError as exc:
                print("ERROR", exc)
    elif action == "export":
        print("ARRAY", to_dense(tf, raw).sum())
except CodecError as exc:
    print("ERROR", exc)
print("SURVIVED")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses to truncate a mapped file")
@pytest.mark.parametrize("action", ["check", "hash", "export"])
def test_truncation_under_the_map_is_an_error_not_sigbus(tmp_path, action):
    path = tmp_path / "two.zt"
    two_tensors(path)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path), action], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode != -signal.SIGBUS, "killed by SIGBUS"
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "SURVIVED" in out and "HASH" not in out  # no digest over bytes that are gone
    assert "changed on disk since it was opened" in out or "ends at byte" in out
    if action == "check":
        assert "size changed from" in out or "ends at byte" in out


def test_an_unchanged_file_reads_as_before(tmp_path):
    from ztviewer.codec.check import check_file
    from ztviewer.codec.content_hash import array_sha256, content_sha256
    from ztviewer.codec.multifile import open_path

    path = tmp_path / "two.zt"
    two_tensors(path)
    with open_path(path) as tf:
        report = check_file(tf)
        assert report.ok and report.digests_verified == 1 and report.tensors_decoded == 2
        expected = array_sha256(np.arange(N, dtype=np.float32), "float32")
        assert [content_sha256(tf, t) for t in tf.tensors] == [expected, expected]
        assert tf.source.changed() is None


def test_a_rewritten_file_is_noticed(tmp_path):
    import os

    from ztviewer.codec.errors import SourceChanged
    from ztviewer.codec.multifile import open_path

    path = tmp_path / "two.zt"
    two_tensors(path)
    with open_path(path) as tf:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same size, rewritten in place
        assert tf.source.changed() == "it was rewritten (its modification time changed)"
        with pytest.raises(SourceChanged):
            tf.source.view(64, 16)


_ARRAYS_CHILD = """
import sys
import numpy as np
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import CodecError
from ztviewer.codec.mapped_pages import require_unchanged
from ztviewer.codec.multifile import open_path

tf = open_path(sys.argv[1])
raw, packed = tf.tensor("raw"), tf.tensor("packed")
owned, decoded = to_dense(tf, raw), to_dense(tf, packed)          # memory of their own
mapped = to_dense(tf, raw, mapped=True)                            # asked for: a view of the map
print("BEFORE", owned.flags.writeable, np.shares_memory(owned, mapped), float(mapped[-1]))
require_unchanged(owned)                                           # not a map: nothing to check
with open(sys.argv[1], "r+b") as other:
    other.truncate(4096)
print("OWNED", float(owned[-1]), float(decoded[-1]))               # still whole: no page of the file is touched
for what, touch in (("VIEW", lambda: require_unchanged(mapped)), ("AGAIN", lambda: to_dense(tf, raw))):
    try:
        touch()
        print(what, "read")
    except CodecError as exc:
        print(what, "refused:", exc)
print("SURVIVED")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses to truncate a mapped file")
def test_decoded_arrays_are_owned_and_a_mapped_view_is_checked_before_touching(tmp_path):
    """The library contract: ``to_dense`` / ``dense_array`` / ``component_bytes`` return memory of their own
    (read with positional reads), valid after the file is truncated; a zero-copy view of the map is asked for
    with ``mapped=True`` and must be checked (``mapped_pages.require_unchanged``) before it is touched later."""
    path = tmp_path / "two.zt"
    two_tensors(path)
    proc = subprocess.run([sys.executable, "-c", _ARRAYS_CHILD, str(path)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode != -signal.SIGBUS, "killed by SIGBUS"
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"BEFORE False False {float(N - 1)}" in out
    assert f"OWNED {float(N - 1)} {float(N - 1)}" in out
    assert "VIEW refused:" in out and "its size changed from" in out and "to 4,096 bytes" in out
    assert "AGAIN refused:" in out and "SURVIVED" in out
