"""The properties the fuzz tests assert, as plain functions (shared by the hypothesis tests and the pinned
reproducers)."""
from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from tests.fuzz.strategies import Built
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import CodecError
from ztviewer.codec.registry import read_source
from ztviewer.codec.source import InMemorySource

#: A corrupted file gets this long (per call) before unbounded work counts as a failure ...
TIME_BUDGET_S = 5.0
#: ... or this many chunks (cancel polls): with the decode cap of the corruption test (16 MiB) legitimate
#: work on these small files needs a handful, so a runaway loop is caught in a fraction of a second.
CALL_BUDGET = 48
#: The memory property: peak traced allocation <= FACTOR × file size + SLACK, with the decode cap at CAP.
FACTOR = 16
SLACK = 1 << 20
CAP = 1 << 20


class TookTooLong(AssertionError):
    pass


def deadline(what: str, seconds: float = TIME_BUDGET_S, calls: int | None = CALL_BUDGET):
    """A ``cancelled`` callback for the codec that fails the test once ``seconds`` have passed or it has
    been polled more than ``calls`` times (the codec polls once per chunk)."""
    limit = time.monotonic() + seconds
    polls = 0

    def cancelled() -> bool:
        nonlocal polls
        polls += 1
        if calls is not None and polls > calls:
            raise TookTooLong(f"{what} went on for more than {calls} chunks on a small file")
        if time.monotonic() > limit:
            raise TookTooLong(f"{what} ran longer than {seconds} s on a small file")
        return False

    return cancelled


def check_valid(built: Built) -> None:
    """Property 1: a valid file opens cleanly and every tensor hashes to the bytes it was built from."""
    tf = read_source(InMemorySource(built.data, built.path))
    problems = [str(p) for p in tf.all_problems() if p.is_error]
    assert tf.readable, problems
    assert not problems, problems
    expected = built.expected
    assert sorted(t.name for t in tf.tensors) == sorted(expected)
    for tensor in tf.tensors:
        want = expected[tensor.name]
        listed = (want.dtype, want.shape, want.layout)
        assert (tensor.dtype, tuple(tensor.shape), tensor.layout) == listed, tensor
        if built.expected_dense is not None:  # BLZ: the reconstruction of the cores
            got = to_dense(tf, tensor)
            assert got.shape == built.expected_dense.shape
            assert np.allclose(got, built.expected_dense, rtol=1e-12, atol=1e-12)
            assert len(content_sha256(tf, tensor)) == 64
        else:
            assert content_sha256(tf, tensor) == want.sha256, tensor.name
    report = check_file(tf)
    assert report.ok, [str(p) for p in report.problems]
    assert report.tensors_decoded == len(tf.tensors)
    digests = sum(c.digest is not None for t in tf.tensors for c in t.components.values())
    assert report.digests_verified == digests


def exercise(data: bytes, path: str) -> None:
    """Property 2: reading never raises; checking, hashing and decoding raise nothing but CodecError."""
    tf = read_source(InMemorySource(data, path))
    # every problem is well formed (its text is what the GUI and CLI show)
    for problem in tf.all_problems():
        assert isinstance(problem.describe(), str)
    for tensor in tf.tensors:
        if tensor.has_errors:
            continue
        try:
            content_sha256(tf, tensor, cancelled=deadline(f"content_sha256({tensor.name!r})"))
        except CodecError:
            pass
        try:
            to_dense(tf, tensor)
        except CodecError:
            pass
    try:
        check_file(tf, cancelled=deadline("check_file", calls=CALL_BUDGET + 4 * len(tf.tensors)))
    except CodecError:
        pass


@contextmanager
def decode_cap(limit: int = CAP) -> Iterator[None]:
    old = os.environ.get("ZTVIEWER_MAX_DECODED")
    os.environ["ZTVIEWER_MAX_DECODED"] = str(limit)
    try:
        yield
    finally:
        if old is None:
            del os.environ["ZTVIEWER_MAX_DECODED"]
        else:
            os.environ["ZTVIEWER_MAX_DECODED"] = old


def peak_allocation(data: bytes, path: str) -> int:
    """Peak bytes traced by tracemalloc while reading, hashing, decoding and checking ``data``.

    A first, untraced pass imports whatever the code paths import lazily and fills one-time caches, so
    the traced pass measures only what this file costs.
    """
    with decode_cap():
        exercise(data, path)
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            exercise(data, path)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def memory_bound(size: int) -> int:
    return FACTOR * size + SLACK


def check_memory(data: bytes, path: str) -> None:
    """Property 3: never allocate more than a small multiple of the file size (or the decode cap)."""
    peak = peak_allocation(data, path)
    bound = memory_bound(len(data))
    assert peak <= bound, (f"peak traced allocation {peak:,} bytes > {FACTOR} × {len(data):,} + {SLACK:,} "
                           f"= {bound:,} (decode cap {CAP:,}); ratio {peak / max(1, len(data)):.0f}× file size")
