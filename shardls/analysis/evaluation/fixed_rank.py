"""A name below a statement that fixes its rank (`b, s, d = x.shape`, `assert x.ndim == 3`): the
value it held there, as an array of that rank (the scope's `rank` binding; why it is certain, or
an assumption for an `assert`, is in `library/shape_use.py`). Arrays of one rank from several
branches join into one array of that rank (`joined_array`)."""

from __future__ import annotations

import ast
from dataclasses import replace

from shardls.analysis.rank_statements import asserted_ranks, unpacked_shapes
from shardls.analysis.scopes import Binding
from shardls.analysis.values import ArrayV, Choice, Origin, Unknown, Value, options


def with_fixed_rank(value: Value, binding: Binding) -> Value:
    """`value` (what the name held above the statement of a `rank` binding) as an array of the rank
    that statement fixes: an array of unknown rank, or a value not known to be an array, gets
    that rank, each size named after its unpacking target (else `name.shape[i]`); an array of
    that rank keeps its shape (of another rank the statement raises, and the rank is unknown
    below it); other values (a module, a dict, a number) are what they were."""
    statement = binding.node
    name = binding.name
    line = binding.line
    if isinstance(statement, ast.Assign) and name in unpacked_shapes(statement):
        names = unpacked_shapes(statement)[name]
        origin = Origin(f"rank of {name} from line {line}", line=line - 1)
    elif isinstance(statement, ast.Assert):
        names = (None,) * asserted_ranks(statement.test)[name]
        origin = Origin(
            f"rank of {name} asserted at line {line}",
            line=line - 1,
            assumption=f"`{name}` has rank {len(names)}, as the assert at line {line} says",
        )
    else:
        return value
    return _ranked(value, name, names, origin, line)


def _ranked(value: Value, name: str, names: tuple[str | None, ...], origin: Origin, line: int) -> Value:
    dims = tuple(
        Unknown(
            f"size {index} of {name}.shape (its rank is fixed at line {line})",
            symbol=target if target is not None else f"{name}.shape[{index}]",
            origin=origin,
        )
        for index, target in enumerate(names)
    )
    if isinstance(value, Choice):
        return joined_array(
            replace(value, options=tuple(_one(option, dims) for option in value.options)), dims
        )
    return _one(value, dims)


def _one(value: Value, dims: tuple[Value, ...]) -> Value:
    if isinstance(value, ArrayV) and value.shape is not None:
        # of another rank, the statement raises: nothing below it runs with this value
        return value if len(value.shape) == len(dims) else ArrayV(None, value.dtype)
    if not isinstance(value, ArrayV | Unknown):
        return value
    return replace(value, shape=dims) if isinstance(value, ArrayV) else ArrayV(dims)


def joined_array(value: Value, names: tuple[Value, ...] | None = None) -> Value:
    """A choice of arrays of one rank (`k` from a cache update under an `if`, from a projection
    otherwise) as one array of that rank: each size where the options agree, else unknown (named
    as `names` says, when given); the dtype where they agree. Anything else as it is."""
    if not isinstance(value, Choice):
        return value
    every = list(options(value))
    arrays = [o for o in every if isinstance(o, ArrayV) and o.shape is not None]
    ranks = {len(a.shape) for a in arrays if a.shape is not None}
    if len(arrays) != len(every) or len(ranks) != 1:
        return value
    columns = list(zip(*(a.shape for a in arrays if a.shape is not None), strict=True))
    shape = tuple(
        sizes[0]
        if all(size == sizes[0] for size in sizes)
        else names[index]
        if names is not None and index < len(names)
        else Unknown(f"size {index}, which differs between branches")
        for index, sizes in enumerate(columns)
    )
    dtypes = {a.dtype for a in arrays}
    return ArrayV(shape, dtypes.pop() if len(dtypes) == 1 else None)
