"""Properties of the file row: the totals of a lazily listed file come from its columns."""
from __future__ import annotations

from benchmarks.files import many_zt
from ztviewer.codec import open_file
from ztviewer.codec.tensor_table import TensorTable
from ztviewer.session.properties import file_props


def _derived(props) -> dict[str, str]:
    derived = next(p for p in props if p.key == "Derived")
    return {c.key: c.value for c in derived.children}


def test_file_totals_of_a_table_build_no_tensor_and_match_the_built_file(tmp_path):
    path, count, _, _ = many_zt(tmp_path, quick=True)            # eight dtypes, shapes (1..7, 3)
    lazy, built = open_file(path), open_file(path)
    assert isinstance(lazy.tensors, TensorTable)
    every = list(built.tensors)
    expected = _derived(file_props(built, None))
    assert _derived(file_props(lazy, None)) == expected
    assert lazy.tensors._built == 0
    dense = sum(t.dense_nbytes for t in every)
    assert expected["dense tensor bytes"].startswith(f"{dense:,} bytes")
    lazy.tensors[count // 3]                      # one built tensor counts as itself
    assert _derived(file_props(lazy, None)) == expected and lazy.tensors._built == 1
