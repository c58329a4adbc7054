"""Static models of the example files in tests/memory/models, and where those files are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.cli.main import main
from shardls.memory.discover import file_models
from shardls.memory.model import ModelMemory
from shardls.meshtext import parse_mesh_text

MODELS = Path(__file__).parent / "models"
REPO = Path(__file__).parents[2]


def static_models(
    source: str | Path, mesh: str | None = None, only: str | None = None, **settings: object
) -> list[ModelMemory]:
    """The models of a model file (a name in tests/memory/models) or of source text."""
    if isinstance(source, Path) or source.endswith(".py"):
        path = MODELS / source if isinstance(source, str) else source
        text = path.read_text()
    else:
        path, text = Path("/virtual/model.py"), source
    chosen = Settings(default_mesh=parse_mesh_text(mesh) if mesh else None, **settings)  # type: ignore[arg-type]
    return list(file_models(Workspace(), str(path), text, chosen, only).models)


def instance(models: list[ModelMemory], name: str) -> ModelMemory:
    return next(m for m in models if m.instantiation and m.name == name)


def by_class(models: list[ModelMemory], name: str) -> ModelMemory:
    return next(m for m in models if not m.instantiation and m.name == name)


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    """`shardls ...` in-process, with what it printed."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)
