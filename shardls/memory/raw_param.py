"""A parameter as a module's `__init__` writes it, before its layout (`layout.py` gives it one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.analysis.library.nnx import StackLevel
from shardls.analysis.recognizers.nnx.annotations import Annotation
from shardls.analysis.values import Value
from shardls.core import DType
from shardls.memory.model import ParamPath


@dataclass(frozen=True)
class RawParam:
    """A parameter as written, before its layout: shape and annotation are still values."""

    where: ParamPath
    shape: tuple[Value, ...] | None
    dtype: DType | None
    annotation: Annotation | None
    levels: tuple[StackLevel, ...]
    line: int

    @property
    def path(self) -> str:
        return self.where.compact()

    def under(self, prefix: str, copies: Sequence[str] = ()) -> RawParam:
        """The same parameter seen from the module that holds it: `prefix` then each copy's index."""
        return replace(self, where=self.where.under(prefix, copies))
