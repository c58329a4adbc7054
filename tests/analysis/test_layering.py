"""Lower layers never import upper ones: the core knows nothing of the analysis, and the analysis
nothing of the model-memory report, the renderings, the CLI or the server (which pass the
analyzer what it needs from them, such as the memory check's diagnostics)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shardls"

ABOVE = {
    "core": ("shardls.analysis", "shardls.memory", "shardls.render", "shardls.cli", "shardls.server"),
    "analysis": ("shardls.memory", "shardls.render", "shardls.cli", "shardls.server"),
}


def _imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files
    reaching_up = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in files
        for name in _imported(path)
        if name.startswith(ABOVE[layer])
    }
    assert not reaching_up


def test_the_check_finds_an_import_reaching_up(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text("def f():\n    from shardls.memory.diagnostics import memory_diagnostics\n")
    assert "shardls.memory.diagnostics" in _imported(stray)
