"""The entries of an index `x[...]`, parsed as jnp's `NDIndexer` parses them: one per consumed
dimension or `None`, with `...` and the implicit trailing dimensions expanded to full slices."""

from __future__ import annotations

from dataclasses import dataclass
from types import EllipsisType

from shardls.core.typing.errors import TYPE_ERROR, ShapeError
from shardls.core.typing.promotion import BOOL
from shardls.core.typing.types import ShardedType

Index = int | slice | None | EllipsisType | ShardedType
"""One entry of `x[...]`: a static integer, a static slice, `None`, `...`, or a traced integer
array (rank 0: a dynamic index; rank 1 or more: a gather). Python bools are not indices here."""

INDEX_ERROR = "IndexError"


@dataclass(frozen=True)
class Entry:
    """A parsed index entry: the dimension of `x` it consumes (None for `None`)."""

    index: Index
    dim: int | None
    written: int
    """Its position in the index as written (before `...` is expanded)."""


def parse_index(x: ShardedType, indices: Index | tuple[Index, ...] | list[Index]) -> list[Entry]:
    """`NDIndexer.from_raw_indices` then `expand_ellipses`: one entry per consumed dimension or
    `None`, with the implicit trailing full slices."""
    raw: list[Index] = []
    if isinstance(indices, (tuple, list)):
        raw.extend(indices)
    else:
        raw.append(indices)
    for i in raw:
        if isinstance(i, bool):
            raise ValueError("boolean indices are not modelled")
        if isinstance(i, ShardedType) and i.dtype == BOOL:
            raise ShapeError(
                f"Array boolean indices must be concrete; got {i.dtype.name}{list(i.shape)}",
                "NonConcreteBooleanIndexError",
            )
        if isinstance(i, ShardedType) and not (i.dtype.name.startswith(("int", "uint"))):
            raise ShapeError(
                f"Indexer must have integer or boolean type, got indexer with type {i.dtype.name}", TYPE_ERROR
            )
    ellipses = sum(1 for i in raw if i is Ellipsis)
    if ellipses > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')", INDEX_ERROR)
    consumed = sum(1 for i in raw if i is not None and i is not Ellipsis)
    if consumed > x.rank:
        raise ShapeError(
            f"Too many indices: array is {x.rank}-dimensional, but {consumed} were indexed", INDEX_ERROR
        )
    out: list[Entry] = []
    dim = 0
    for written, i in enumerate(raw):
        if i is None:
            out.append(Entry(None, None, written))
        elif i is Ellipsis:
            for _ in range(x.rank - consumed):
                out.append(Entry(slice(None), dim, written))
                dim += 1
        else:
            out.append(Entry(i, dim, written))
            dim += 1
    out.extend(Entry(slice(None), d, len(raw)) for d in range(dim, x.rank))
    return out


def is_scalar(i: Index) -> bool:
    """An integer, or a traced rank-0 integer array."""
    return isinstance(i, int) or (isinstance(i, ShardedType) and i.rank == 0)
