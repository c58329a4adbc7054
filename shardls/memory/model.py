"""A whole model's parameters with their layouts, and the totals a memory report shows.

Pure data: nothing here reads source code or imports jax. The resolver (`resolve.py`) fills
these in; the CLI table, the code lens, the hover and the SH213 diagnostic only read them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from shardls.core import DType, PartitionSpec

_PATH_PART = re.compile(r"[^.\[]+(?:\[[^\]]*\])*|(?:\[[^\]]*\])+")
"""One attribute of a path with its indices: `layers[0..79]`, `mlp`, `kernel`."""

Dim = int | str
"""A dimension: its size, or the name it is known by when the size is not written (`d_model`)."""


@dataclass(frozen=True)
class ParamPath:
    """A parameter's attribute path, where a piece with several entries stands for one copy per
    entry: `(("layers",), ("[0]", ..., "[79]"), ("mlp",), ("kernel",))`. Kept unexpanded, so
    that layers of layers cost the sum of their counts, not the product."""

    pieces: tuple[tuple[str, ...], ...] = ()

    def under(self, prefix: str, copies: Sequence[str] = ()) -> ParamPath:
        """The path seen from the module holding this one: `prefix`, then one copy per index."""
        head = ((prefix,),) if prefix else ()
        return ParamPath(head + ((tuple(copies),) if copies else ()) + self.pieces)

    @property
    def count(self) -> int:
        return math.prod(len(piece) for piece in self.pieces)

    def compact(self) -> str:
        """`layers[0..79].mlp.kernel`."""
        return _joined(piece[0] if len(piece) == 1 else _range_label(piece) for piece in self.pieces)

    def expanded(self) -> Iterator[str]:
        for combination in itertools.product(*self.pieces):
            yield _joined(combination)


def _joined(pieces: Iterable[str]) -> str:
    text = ""
    for piece in pieces:
        text = piece if not text else text + piece if piece.startswith("[") else f"{text}.{piece}"
    return text


def _range_label(indices: tuple[str, ...]) -> str:
    if indices == tuple(f"[{i}]" for i in range(len(indices))):
        return f"[0..{len(indices) - 1}]"
    if set(indices) == {"[*]"}:  # copies whose indices are unknown: the row's count says how many
        return "[*]"
    return "[" + ",".join(index.strip("[]") for index in indices) + "]"


@dataclass(frozen=True)
class ParamMemory:
    """One parameter of the model, or `count` identical ones (`layers[0..79].mlp.up.kernel`)."""

    path: str
    shape: tuple[Dim, ...]
    dtype: DType
    spec: PartitionSpec | None
    """After logical rules; None when the parameter is not annotated (replicated on a mesh)."""
    shard_shape: tuple[Dim, ...]
    """What one device holds; the whole shape when replicated or without a mesh."""
    count: int = 1
    line: int | None = None
    """0-based line where the layer or parameter is created."""
    logical_spec: PartitionSpec | None = None
    pattern: ParamPath | None = None
    """The copies' paths, to list them one by one (None: just `path`)."""

    def paths(self) -> Iterator[str]:
        """One path per copy: `layers[0].mlp.up.kernel`, `layers[1].mlp.up.kernel`, ..."""
        if self.pattern is None:
            yield self.path
        else:
            yield from self.pattern.expanded()

    @property
    def is_symbolic(self) -> bool:
        return any(isinstance(dim, str) for dim in self.shape)

    @property
    def size(self) -> int | None:
        """Elements in one copy; None when a dimension is symbolic."""
        return _elements(self.shape)

    @property
    def global_bytes(self) -> int | None:
        """Bytes of one copy, all shards together (what `x.nbytes` says)."""
        size = self.size
        return None if size is None else self.dtype.bytes_for(size)

    @property
    def bytes_per_device(self) -> int | None:
        """Bytes of one copy on a device that holds a shard of it (every device of the mesh)."""
        size = _elements(self.shard_shape)
        return None if size is None else self.dtype.bytes_for(size)


def _elements(shape: tuple[Dim, ...]) -> int | None:
    if any(isinstance(dim, str) for dim in shape):
        return None
    return math.prod(int(dim) for dim in shape)


@dataclass(frozen=True)
class ModelMemory:
    """One model: a `nnx.Module` subclass sized by one set of constructor arguments."""

    name: str
    """The class name (`Transformer`), or `model = Transformer(...)`'s variable for an instance."""
    class_name: str
    path: str
    line: int
    """0-based line of the class statement or of the instantiation."""
    params: tuple[ParamMemory, ...]
    mesh_text: str | None
    """`fsdp=8`: the mesh the parameters are laid out on; None for one device."""
    assumptions: tuple[str, ...] = ()
    instantiation: bool = False
    covered: bool = False
    """For a class: sized by a call whose model the file's report shows anyway (an instantiation
    in the file, or a call inside another model), so a report of the whole file leaves it out."""
    end_column: int = 0
    column: int = 0

    @property
    def known(self) -> tuple[ParamMemory, ...]:
        return tuple(p for p in self.params if not p.is_symbolic)

    @property
    def param_count(self) -> int:
        """Elements over every parameter with a known shape (symbolic ones are in `assumptions`)."""
        return sum((p.size or 0) * p.count for p in self.known)

    @property
    def total_bytes(self) -> int:
        return sum((p.global_bytes or 0) * p.count for p in self.known)

    @property
    def max_bytes_per_device(self) -> int:
        """Every parameter's shard is the same size on every device that holds one (JAX pads
        uneven shards), and each device holds one shard of each parameter, so the fullest device
        holds the sum of the per-device sizes."""
        return sum((p.bytes_per_device or 0) * p.count for p in self.known)

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(sorted({p.dtype.name for p in self.params}))

    def subtotals(self, depth: int = 1) -> list[Subtotal]:
        """Per submodule: the first `depth` attributes of each path (`layers[0..79]` is one)."""
        groups: dict[str, Subtotal] = {}
        for param in self.known:
            parts = _PATH_PART.findall(param.path)
            key = ".".join(parts[:depth]) if len(parts) > 1 else "(own)"
            group = groups.setdefault(key, Subtotal(key))
            group.param_count += (param.size or 0) * param.count
            group.total_bytes += (param.global_bytes or 0) * param.count
            group.bytes_per_device += (param.bytes_per_device or 0) * param.count
        return list(groups.values())


@dataclass
class Subtotal:
    """The parameters under one attribute of the model (`embed`, `layers[0..79]`)."""

    name: str
    param_count: int = 0
    total_bytes: int = 0
    bytes_per_device: int = 0


@dataclass(frozen=True)
class Models:
    """Every model in one file (each says what it assumed)."""

    path: str
    models: tuple[ModelMemory, ...]
