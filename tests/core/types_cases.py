"""Random sharding-in-types programs (plain JSON) for the differential test and the long run.

A program is a mesh, a list of inputs (shape, dtype, spec) and a chain of 1-6 operations on the
current value; an operation that needs a second array names an input. The generator tracks
shapes with shardls' own propagation (shapes only); a chain stops at the first step shardls
rejects, and JAX then must reject the same step.
"""

from __future__ import annotations

import math
import random
from typing import Any

from shardls.core import AxisType, Mesh, PartitionSpec, parse_dtype
from shardls.core.typing import ACTIVATIONS, ShapeError, ShardedType, TypeRejected, index
from shardls.core.typing.results import check_divisible
from shardls.core.typing.types import explicit_spec

Program = dict[str, Any]
NAMES = ("X", "Y", "Z", "W")
SIZES = (1, 2, 2, 4, 3)
DTYPES = ("float32", "float32", "bfloat16", "int32")
DIMS = (1, 2, 3, 4, 6, 8, 12, 16, 24)


def mesh_of(program: Program) -> Mesh:
    m = program["mesh"]
    return Mesh(tuple(m["names"]), tuple(m["sizes"]), tuple(AxisType(t) for t in m["types"]))


def spec_of(entries: list[Any] | None, unreduced: list[str] = (), reduced: list[str] = ()) -> PartitionSpec:  # type: ignore[assignment]
    return PartitionSpec.of(
        *[tuple(e) if isinstance(e, list) else e for e in entries or []], unreduced=unreduced, reduced=reduced
    )


def _random_spec(
    rng: random.Random, mesh: Mesh, shape: list[int], *, dividing: bool, duplicates: bool = True
) -> list[Any]:
    pool = list(mesh.axis_names)
    rng.shuffle(pool)
    out: list[Any] = []
    for n in shape:
        r = rng.random()
        if r < 0.4 or not pool:
            out.append(None)
            continue
        take = 2 if r > 0.9 and len(pool) >= 2 else 1
        axes = [pool.pop() for _ in range(take)]
        if dividing and n % math.prod(mesh.sizes_by_name[a] for a in axes):
            pool.extend(axes)
            out.append(None)
            continue
        out.append(axes[0] if take == 1 else axes)
    if duplicates and rng.random() < 0.03 and out:
        out[rng.randrange(len(out))] = rng.choice(mesh.axis_names) if out else None
    return out


def _random_shape(rng: random.Random, rank: int) -> list[int]:
    return [rng.choice(DIMS) for _ in range(rank)]


def _input(rng: random.Random, mesh: Mesh, shape: list[int], dtype: str | None = None) -> dict[str, Any]:
    return {
        "shape": shape,
        "dtype": dtype or rng.choice(DTYPES),
        "spec": _random_spec(rng, mesh, shape, dividing=rng.random() < 0.97, duplicates=False),
    }


def typed_input(mesh: Mesh, entry: dict[str, Any]) -> ShardedType:
    spec = spec_of(entry["spec"], entry.get("unreduced", ()), entry.get("reduced", ()))
    shape = tuple(entry["shape"])
    check_divisible(mesh, shape, explicit_spec(mesh, spec, len(shape)))
    return ShardedType(
        shape,
        parse_dtype(entry["dtype"]),
        mesh,
        explicit_spec(mesh, spec, len(shape)),
        frozenset(entry.get("unreduced", ())),
        frozenset(entry.get("reduced", ())),
    )


def _factorizations(rng: random.Random, shape: list[int]) -> list[int]:
    """A new shape of the same size: split one dimension, merge two neighbours, add/drop 1s, or
    anything."""
    r = rng.random()
    new = list(shape)
    if r < 0.35 and new:
        d = rng.randrange(len(new))
        n = new[d]
        divisors = [k for k in range(2, n) if n % k == 0]
        if divisors:
            k = rng.choice(divisors)
            new[d : d + 1] = [k, n // k]
            return new
    if r < 0.7 and len(new) >= 2:
        d = rng.randrange(len(new) - 1)
        new[d : d + 2] = [new[d] * new[d + 1]]
        return new
    if r < 0.8:
        new.insert(rng.randrange(len(new) + 1), 1)
        return new
    total = math.prod(shape)
    out = []
    while total > 1 and len(out) < 4:
        k = rng.choice([d for d in range(2, total + 1) if total % d == 0])
        out.append(k)
        total //= k
    return out or [1]


def random_program(rng: random.Random, ops: tuple[int, int] = (1, 6), focus: float = 0.0) -> Program:
    """A random program of `ops[0]`-`ops[1]` operations; `focus`: the share of operations drawn
    from the less common forms (`_random_focus_op`), for tests that write few programs."""
    from core_types_support import apply_ours  # shapes only: where the chain stands

    n_axes = rng.randint(1, 3)
    names = list(NAMES[:n_axes])
    sizes = [rng.choice(SIZES) for _ in names]
    kind = rng.random()
    types = (
        ["Explicit"] * n_axes
        if kind < 0.8
        else [rng.choice(("Explicit", "Auto")) for _ in names]
        if kind < 0.95
        else ["Auto"] * n_axes
    )
    program: Program = {"mesh": {"names": names, "sizes": sizes, "types": types}, "inputs": [], "ops": []}
    mesh = mesh_of(program)
    first = _input(rng, mesh, _random_shape(rng, rng.randint(1, 3)))
    if rng.random() < 0.06 and first["dtype"] != "int32" and not mesh.has_auto_axis:
        free = [
            a for a in names if a not in str(first["spec"]) and mesh.types_by_name[a] is AxisType.EXPLICIT
        ]
        if free:
            first["unreduced" if rng.random() < 0.6 else "reduced"] = [rng.choice(free)]
    program["inputs"].append(first)
    for _ in range(rng.randint(*ops)):
        try:
            current = apply_ours(program)[-1]
        except (TypeRejected, ShapeError):
            break
        plain = not (focus and rng.random() < focus) or current.unreduced or current.reduced
        program["ops"].append((_random_op if plain else _random_focus_op)(rng, program, mesh, current))
    return program


def _random_focus_op(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    """The forms a few hundred programs would otherwise rarely write: `broadcast_to`, a whole
    flattening, a matrix product with a 2-D operand of the same dtype (`lax.dot_general` in
    source), and the gathers, scatters and sorts."""
    r = rng.random()
    if r < 0.15:
        return _random_broadcast_to(rng, x)
    if r < 0.3:
        return ["reshape", [x.size], None]
    if r < 0.45 and x.rank:
        other = _second(rng, program, mesh, [x.shape[-1], rng.choice(DIMS)], x.dtype.name)
        return ["matmul", other, None]
    return _random_gather_scatter_op(rng, program, mesh, x)


def _random_broadcast_to(rng: random.Random, x: ShardedType) -> list[Any]:
    """`jnp.broadcast_to`: new leading dimensions, size-1 dimensions grown, rarely a bad shape."""
    lead = [rng.choice((1, 2, 3, 4)) for _ in range(rng.choice((0, 1, 1, 2)))]
    tail = [rng.choice((n, n, 2, 4)) if n == 1 else n for n in x.shape]
    if tail and rng.random() < 0.05:
        tail[rng.randrange(len(tail))] += 1
    return ["broadcast_to", lead + tail]


def _second(
    rng: random.Random, program: Program, mesh: Mesh, shape: list[int], dtype: str | None = None
) -> int:
    program["inputs"].append(_input(rng, mesh, shape, dtype))
    return len(program["inputs"]) - 1


def _random_op(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    shape = list(x.shape)
    rank = len(shape)
    if not (x.unreduced or x.reduced) and rng.random() < 0.3:
        return _random_selection_op(rng, program, mesh, x)
    r = rng.random()
    if x.unreduced or x.reduced:
        # Past the rules written for them, JAX's handling of unreduced/reduced values is internal
        # assertions; the sweep stays with the operations that have rules.
        r = rng.choice((0.01, 0.6, 0.7, 0.9, 0.95))
    out_spec = (
        (lambda s: _random_spec(rng, mesh, s, dividing=rng.random() < 0.9)) if rng.random() < 0.25 else None
    )
    if r < 0.14:
        op = rng.choice(("add", "subtract", "multiply", "divide", "maximum", "greater"))
        how = 0.9 if x.unreduced or x.reduced else rng.random()
        if how < 0.2:
            return ["binary", op, rng.choice(("int", "float"))]
        other = list(shape)
        if how < 0.5 and other:
            other[rng.randrange(rank)] = 1
        elif how < 0.65 and other:
            other = other[rng.randrange(rank) :]
        return ["binary", op, _second(rng, program, mesh, other)]
    if r < 0.2:
        return ["unary", rng.choice(("exp", "tanh", "negative", "sigmoid", "relu"))]
    if r < 0.24:
        return ["where", _second(rng, program, mesh, list(shape))]
    if r < 0.36 and rank >= 1:
        k = shape[-1]
        other = (
            [k, rng.choice(DIMS)] if rng.random() < 0.8 or rank < 2 else shape[:-2] + [k, rng.choice(DIMS)]
        )
        which = rng.choice(("matmul", "dot"))
        spec = (
            out_spec(
                [*shape[:-1], other[-1]]
                if which == "matmul" and len(other) <= rank
                else shape[:-1] + other[:-2] + other[-1:]
            )
            if out_spec
            else None
        )
        return [which, _second(rng, program, mesh, other), spec]
    if r < 0.44 and rank >= 1:
        letters = "abcd"[:rank]
        contract = rng.choice(letters)
        other_shape = [shape[letters.index(contract)], rng.choice(DIMS)]
        keep = [c for c in letters if c != contract or rng.random() < 0.2]
        result = "".join(keep) + "e"
        if rng.random() < 0.3:
            result = result[::-1]
        spec = (
            out_spec([dict(zip(letters + "e", shape + other_shape[-1:]))[c] for c in result])
            if out_spec
            else None
        )
        return ["einsum", f"{letters},{contract}e->{result}", _second(rng, program, mesh, other_shape), spec]
    if r < 0.56:
        new = _factorizations(rng, shape)
        return ["reshape", new, out_spec(new) if out_spec else None]
    if r < 0.64 and rank >= 1:
        perm = list(range(rank))
        rng.shuffle(perm)
        return ["transpose", perm if rng.random() < 0.7 else None]
    if r < 0.76 and rank >= 1:
        op = rng.choice(("sum", "mean", "max", "min"))
        axis: Any = (
            rng.randrange(rank)
            if rng.random() < 0.6
            else None
            if rng.random() < 0.5
            else sorted(rng.sample(range(rank), min(2, rank)))
        )
        return ["reduce", op, axis, rng.random() < 0.3]
    if r < 0.8 and rank >= 1:
        return ["argmax", rng.randrange(rank)]
    if r < 0.86 and rank >= 1:
        return ["cumsum", rng.randrange(rank) if rng.random() < 0.85 else None]
    if r < 0.94:
        explicit = [a for a in mesh.axis_names if mesh.types_by_name[a] is AxisType.EXPLICIT]
        spec = _random_spec(rng, mesh, shape, dividing=rng.random() < 0.9)
        if mesh.mixed_types or mesh.has_auto_axis:
            spec = [e if (isinstance(e, str) and e in explicit) or e is None else None for e in spec]
        return ["reshard", spec]
    if r < 0.97:
        return ["astype", rng.choice(("float32", "bfloat16", "int32"))]
    if r < 0.985:
        return _random_broadcast_to(rng, x)
    return ["zeros_like"]


def _type_spec(x: ShardedType) -> list[Any]:
    """The current value's spec as a spec for a new input (its Explicit axes, as the type has them)."""
    return [None if not axes else axes[0] if len(axes) == 1 else list(axes) for axes in x.spec]


def _partner(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType, shape: list[int]) -> int:
    """A second operand for concatenate/stack: mostly sharded like `x`, so that the join happens."""
    index = _second(rng, program, mesh, shape, rng.choice((*DTYPES, "float32", "float32")))
    if rng.random() < 0.6:
        program["inputs"][index]["spec"] = _type_spec(x)
    return index


def _random_selection_op(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    """Indexing, slicing, gather, concatenate, stack and split of the current value."""
    shape = list(x.shape)
    rank = len(shape)
    if rng.random() < 0.1:
        axis = rng.randrange(-rank, rank) if rank and rng.random() < 0.5 else -1 if rank else None
        return ["activation", rng.choice(ACTIVATIONS), axis]
    if rng.random() < 0.3:
        return _random_gather_scatter_op(rng, program, mesh, x)
    r = rng.random()
    if r < 0.45:
        return _random_index(rng, program, mesh, x)
    if r < 0.55 and rank:
        start = [rng.randint(0, n) for n in shape]
        limit = [rng.randint(a, n + (rng.random() < 0.02)) for a, n in zip(start, shape, strict=True)]
        strides = [rng.choice((1, 1, 2, 3)) for _ in shape] if rng.random() < 0.4 else None
        return ["lax_slice", start, limit, strides]
    if r < 0.62 and rank:
        sizes = [rng.choice((n, n, n // 2, max(n - 1, 0), 1)) for n in shape]
        return ["dynamic_slice", sizes]
    if r < 0.8:
        axis: Any = rng.randrange(-rank, rank) if rank else 0
        if rng.random() < 0.1:
            axis = None
        partners = []
        for _ in range(rng.choice((1, 1, 2))):
            other = list(shape)
            if other and axis is not None:
                other[axis] = rng.choice((*DIMS, shape[axis]))
            partners.append(_partner(rng, program, mesh, x, other))
        return ["concatenate", partners, axis]
    if r < 0.9:
        partners = [_partner(rng, program, mesh, x, list(shape)) for _ in range(rng.choice((1, 1, 2)))]
        return ["stack", partners, rng.randrange(-rank - 1, rank + 1)]
    axis = rng.randrange(-rank, rank) if rank else 0
    n = shape[axis] if rank else 1
    sections: Any = rng.choice((2, 2, 3, 4, n))
    if rng.random() < 0.3:
        sections = sorted(rng.randint(0, n) for _ in range(rng.choice((1, 2))))
    return ["split", rng.choice(("split", "array_split")), sections, axis, rng.randrange(4)]


def index_items(items: list[Any], arrays: list[Any]) -> tuple[Any, ...]:
    """The index tuple of an `index`/`at_get` operation; `arrays` holds the inputs (either side's)."""
    out: list[Any] = []
    for item in items:
        if item == "none":
            out.append(None)
        elif item == "ellipsis":
            out.append(Ellipsis)
        elif "int" in item:
            out.append(item["int"])
        elif "slice" in item:
            out.append(slice(*item["slice"]))
        else:
            out.append(arrays[item["array"]])
    return tuple(out)


def _bound(rng: random.Random, n: int) -> int | None:
    """A slice bound for a dimension of size `n`: often absent, sometimes negative."""
    return None if rng.random() < 0.3 else rng.randint(-n, n)


def _random_index(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    """`x[...]` (or `x.at[...].get(out_sharding=)`): integers, slices, `None`, `...`, traced scalars
    and integer arrays, mostly on few dimensions."""
    shape = list(x.shape)
    rank = len(shape)
    consumed = rng.randint(0, rank)
    items: list[Any] = []
    arrays = 0
    for d in range(consumed):
        n = shape[d]
        k = rng.random()
        if k < 0.25:
            items.append({"int": rng.randint(-n, n - 1) if n and rng.random() > 0.03 else n})
        elif k < 0.6:
            items.append(
                {"slice": [_bound(rng, n), _bound(rng, n), rng.choice((None, None, 1, 2, -1, 3, -2))]}
            )
        elif k < 0.72:
            items.append({"slice": [None, None, None]})
        elif k < 0.86 and arrays < 2:
            arrays += 1
            index_shape = [rng.choice((1, 2, 3, 4)) for _ in range(rng.choice((1, 1, 1, 2)))]
            items.append({"array": _second(rng, program, mesh, index_shape, "int32")})
        else:
            items.append({"array": _second(rng, program, mesh, [], "int32")})
    if consumed < rank and rng.random() < 0.3:
        items.insert(rng.randint(0, len(items)), "ellipsis")
        tail = rng.randint(0, rank - consumed)
        items.extend({"slice": [None, None, rng.choice((None, 2))]} for _ in range(tail))
    for _ in range(rng.choice((0, 0, 0, 1, 2))):
        items.insert(rng.randint(0, len(items)), "none")
    if rng.random() < 0.2:
        try:
            inputs = [typed_input(mesh, entry) for entry in program["inputs"]]
            result = index(x, index_items(items, inputs), concrete=True, out_sharding=PartitionSpec.of())
        except (TypeRejected, ShapeError):
            return ["index", items]
        return ["at_get", items, _random_spec(rng, mesh, list(result.shape), dividing=rng.random() < 0.9)]
    return ["index", items]


def random_eager_case(rng: random.Random) -> Program:
    """One indexing of a concrete array on a mesh of at most 8 devices, all axes Explicit."""
    names = list(NAMES[: rng.randint(1, 2)])
    sizes = [rng.choice((1, 2, 2, 4)) for _ in names]
    while math.prod(sizes) > 8:
        sizes[0] = 1
    case: Program = {
        "mesh": {"names": names, "sizes": sizes, "types": ["Explicit"] * len(names)},
        "inputs": [],
        "ops": [],
    }
    mesh = mesh_of(case)
    case["inputs"].append(_input(rng, mesh, _random_shape(rng, rng.randint(1, 3))))
    try:
        x = typed_input(mesh, case["inputs"][0])
    except TypeRejected:
        shape = tuple(case["inputs"][0]["shape"])
        x = ShardedType(shape, parse_dtype("float32"), mesh, ((),) * len(shape))
    case["ops"].append(_random_index(rng, case, mesh, x))
    return case


def _random_gather_scatter_op(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    """Indexed updates (`x.at[...].set/add/...`), boolean masks, `jnp.take`,
    `jnp.take_along_axis`, `jnp.sort`/`argsort` and `lax.top_k` of the current value."""
    shape = list(x.shape)
    rank = len(shape)
    r = rng.random()
    if r < 0.3:
        return _random_update(rng, program, mesh, x)
    if r < 0.35 or not rank:
        mask = _second(rng, program, mesh, shape[: rng.randint(min(1, rank), rank)], "bool")
        return ["index", [{"array": mask}]]
    if r < 0.55:
        index_shape = [rng.choice((1, 2, 3, 4)) for _ in range(rng.choice((0, 1, 1, 2)))]
        axis = rng.randrange(-rank, rank) if rng.random() < 0.8 else None
        return ["take", _second(rng, program, mesh, index_shape, "int32"), axis]
    if r < 0.69:
        axis = rng.randrange(-rank, rank) if rng.random() < 0.9 else None
        if axis is None:
            index_shape = [rng.choice((1, 2, 3, 5))]
        else:
            index_shape = [
                rng.choice((1, 2, 3, n)) if d == axis % rank else rng.choice((1, n, n, n, 2))
                for d, n in enumerate(shape)
            ]
        dtype = "int32" if rng.random() < 0.97 else "float32"
        return ["take_along_axis", _second(rng, program, mesh, index_shape, dtype), axis]
    axis = rng.randrange(-rank, rank) if rng.random() < 0.85 else None
    if r < 0.85:
        return ["sort", rng.choice(("sort", "argsort")), axis]
    axis = -1 if axis is None else axis
    n = shape[axis]
    return ["top_k", rng.choice((1, n, max(n // 2, 0), n + (rng.random() < 0.05))), axis, rng.randrange(2)]


def _random_update(rng: random.Random, program: Program, mesh: Mesh, x: ShardedType) -> list[Any]:
    """`x.at[items].<method>(values)`, with or without `out_sharding=`: values a Python scalar or
    an array broadcastable to the selection (replicated, sharded like it, or at random)."""
    method = rng.choice(("set", "set", "add", "subtract", "multiply", "min", "max"))
    picked = _random_index(rng, program, mesh, x)
    items = picked[1]
    out = _random_spec(rng, mesh, list(x.shape), dividing=rng.random() < 0.9) if rng.random() < 0.2 else None
    if rng.random() < 0.35:
        return ["at_update", method, items, rng.choice(("int", "float")), out]
    try:
        inputs = [typed_input(mesh, entry) for entry in program["inputs"]]
        selected = index(x, index_items(items, inputs))
    except (TypeRejected, ShapeError):
        return ["at_update", method, items, "float", out]
    value_shape = list(selected.shape)
    if value_shape and rng.random() < 0.3:
        value_shape = value_shape[rng.randrange(len(value_shape)) :]
    if value_shape and rng.random() < 0.2:
        value_shape[rng.randrange(len(value_shape))] = 1
    values = _second(rng, program, mesh, value_shape)
    k = rng.random()
    if k < 0.5:
        program["inputs"][values]["spec"] = []
    elif k < 0.8 and len(value_shape) == selected.rank:
        program["inputs"][values]["spec"] = _type_spec(selected)
    return ["at_update", method, items, values, out]
