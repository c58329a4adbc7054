"""The infos of a workspace module's classes and functions (their scopes, methods, returns) are
made once per module version and shared by every file whose analysis evaluates the module
(`ModuleInfo.class_infos`, `function_infos`): each file of a package built the scopes of the
same imported helpers and config classes again. An edited module is a new version, with infos
of its own."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from shardls.analysis import definitions, scopes
from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.workspace import Workspace

CONFIG = """
    class Config:
        def __init__(self, batch):
            self.batch = batch

    def rows(config):
        total = config.batch * 2
        return total
"""

USER = """
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P
    from config import Config, rows

    mesh = jax.make_mesh((8,), ("data",))
    x = jax.device_put(jax.numpy.zeros((rows(Config({batch})), 4)), NamedSharding(mesh, P("data")))
"""


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


def _analyze(analyzer: Analyzer, path: Path) -> FileAnalysis:
    return analyzer.analyze(str(path), path.read_text())


def _rows(analysis: FileAnalysis) -> object:
    (site,) = [s for s in analysis.sites if s.kind.value == "device_put"]
    return site.shape[0] if site.shape is not None else None


def test_a_module_s_scopes_are_built_once_for_all_files_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    original = definitions.build_scope

    def counted(scope: scopes.Scope, *args: object, **kwargs: object) -> scopes.Scope:
        if scope.kind != "module":
            built.append(scope.kind)
        return original(scope, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(definitions, "build_scope", counted)
    _write(tmp_path, "config.py", CONFIG)
    first = _write(tmp_path, "first.py", USER.format(batch=8))
    second = _write(tmp_path, "second.py", USER.format(batch=12))
    analyzer = Analyzer(Workspace([tmp_path], snapshot=True))

    assert _rows(_analyze(analyzer, first)) == 16
    after_first = len(built)
    assert after_first >= 2  # the class `Config`, the functions `rows` and `__init__`
    assert _rows(_analyze(analyzer, second)) == 24
    assert len(built) == after_first  # the second file evaluates the same module's infos

    _write(tmp_path, "config.py", CONFIG.replace("config.batch * 2", "config.batch * 3"))
    analyzer.workspace.refresh()
    assert _rows(_analyze(analyzer, second)) == 36  # the edited module has infos of its own
    assert len(built) > after_first
