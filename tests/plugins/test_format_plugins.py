"""Issue 25: a third-party package registers a format through the ``ztviewer.formats`` entry points, and its
files then open in ``info``, ``check``, ``export``, ``convert`` and the window."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.plugins.toy_package import install_toy_package, toy_file
from ztviewer.codec import registry

VALUES = np.array([1.5, -2.0, 3.25, 0.0, 7.0], dtype=np.float32)


def _cli(plugins, *args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugins), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "ztviewer", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """The toy package on sys.path, the registry's entry points read again (and forgotten afterwards)."""
    plugins = install_toy_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(plugins))
    importlib.invalidate_caches()
    registry.reload_plugins()
    yield plugins
    sys.modules.pop("toyformat", None)
    registry.reload_plugins()


def test_the_command_line_reads_writes_and_checks_a_plugin_format(installed, tmp_path):
    toy = toy_file(tmp_path / "weights.toy", VALUES)
    info = _cli(installed, "info", "--json", toy, cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    head = json.loads(info.stdout)
    assert head["format"] == "toy" and head["attributes"] == {"made_by": "toyformat"}
    assert [(t["name"], t["dtype"], t["shape"]) for t in head["tensors"]] == [("values", "float32", [5])]

    check = _cli(installed, "check", toy, cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr

    exported = _cli(installed, "export", toy, "values", "-o", tmp_path / "values.npy", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert np.load(tmp_path / "values.npy").tobytes() == VALUES.tobytes()

    converted = _cli(installed, "convert", toy, tmp_path / "weights.safetensors", cwd=tmp_path)
    assert converted.returncode == 0, converted.stderr
    from safetensors.numpy import load_file

    assert load_file(str(tmp_path / "weights.safetensors"))["values"].tobytes() == VALUES.tobytes()


def test_without_the_package_the_file_is_unknown_and_the_plugin_is_named_when_installed(tmp_path, installed):
    toy = toy_file(tmp_path / "w.toy", VALUES)
    bare = subprocess.run([sys.executable, "-m", "ztviewer", "info", str(toy)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert bare.returncode != 0 and "not a tensor file ztviewer can read" in bare.stdout + bare.stderr
    truncated = tmp_path / "short.toy"
    truncated.write_bytes(toy.read_bytes()[:12])
    result = _cli(installed, "info", truncated, cwd=tmp_path)
    assert result.returncode != 0 and "5 values need 28 bytes; the file has 12" in result.stdout + result.stderr


def test_in_process_the_registry_lists_and_detects_the_plugin(installed, tmp_path):
    assert "toy" in [spec.name for spec in registry.formats()]
    assert "toy" not in [spec.name for spec in registry.builtin_formats()]
    tf = registry.open_file(toy_file(tmp_path / "w.toy", VALUES))
    assert tf.readable and tf.format == "toy" and registry.spec_of(tf).description == "Toy tensors"
    from ztviewer.file_types import open_filters

    assert "Toy tensors (*.toy)" in open_filters() and "*.toy" in open_filters()[0]


def test_a_broken_plugin_is_reported_and_the_builtin_formats_still_open(tmp_path, monkeypatch):
    plugins = install_toy_package(tmp_path / "site", module="raise RuntimeError('broken on import')\n")
    monkeypatch.syspath_prepend(str(plugins))
    importlib.invalidate_caches()
    registry.reload_plugins()
    try:
        assert [s.name for s in registry.plugin_formats()] == []
        [problem] = registry.plugin_problems()
        assert "'toy'" in problem.message and "RuntimeError: broken on import" in problem.message
        assert {"zt", "zt-v2", "safetensors", "blz"} <= {s.name for s in registry.formats()}
    finally:
        sys.modules.pop("toyformat", None)
        registry.reload_plugins()
