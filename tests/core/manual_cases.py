"""Random shard_map and vmap cases for tests/core/test_manual_types.py, and shardls' answer for
each (the core's rules applied step by step). JAX's answer is in the test module.

A shard_map case: a mesh of 1-3 axes (mostly Explicit, some Auto), arguments whose blocks all
have one shape, `axis_names` (all axes or a subset), in_specs (mostly each argument's own spec,
sometimes another), a chain of body operations (elementwise with another block or a scalar,
the collectives, axis_index, a reduction), out_specs, and `check_vma`. A vmap case: arguments
with a mapped dimension (`in_axes`, sometimes None), `spmd_axis_name`, a body and `out_axes`.
"""

from __future__ import annotations

import math
import random
from typing import Any

from shardls.core import AxisType, Mesh, PartitionSpec
from shardls.core.typing import ShapeError, ShardedType, TypeRejected, binary, reduce, scalar
from shardls.core.typing.collectives import (
    all_gather,
    all_to_all,
    axis_index,
    pcast_varying,
    ppermute,
    psum_scatter,
)
from shardls.core.typing.collectives import reduce as collective_reduce
from shardls.core.typing.manual import block, combine, inferred_in_spec, manual_mesh, output, unchecked
from shardls.core.typing.promotion import FLOAT32, INT32
from shardls.core.typing.types import explicit_spec
from shardls.core.typing.vmap import batched, element, mapping

Case = dict[str, Any]
Outcome = list[list[str]]
"""One entry per observed step: `["ok", type]` or `["error", exception class]` (the last)."""

NAMES = ("X", "Y", "Z")


def our_mesh(case: Case) -> Mesh:
    return Mesh(tuple(case["names"]), tuple(case["sizes"]), tuple(AxisType(t) for t in case["types"]))


def our_spec(entries: list[Any]) -> PartitionSpec:
    return PartitionSpec.of(*[tuple(e) if isinstance(e, list) else e for e in entries])


def _mesh(rng: random.Random, explicit_only: bool) -> tuple[list[str], list[int], list[str]]:
    rank = rng.randint(1, 3)
    sizes = [rng.choice((1, 2, 2, 4)) for _ in range(rank)]
    while math.prod(sizes) > 16:
        sizes[rng.randrange(rank)] = 2
    types = ["Explicit" if explicit_only or rng.random() < 0.85 else "Auto" for _ in range(rank)]
    return list(NAMES[:rank]), sizes, types


def _random_spec(rng: random.Random, axes: list[str], rank: int) -> list[Any]:
    free = list(axes)
    rng.shuffle(free)
    spec: list[Any] = []
    for _ in range(rank):
        roll = rng.random()
        if free and roll < 0.45:
            spec.append(free.pop())
        elif len(free) >= 2 and roll < 0.55:
            spec.append([free.pop(), free.pop()])
        else:
            spec.append(None)
    while spec and spec[-1] is None and rng.random() < 0.5:
        spec.pop()
    return spec


def _axes_of(entries: list[Any]) -> list[str]:
    return [a for e in entries if e is not None for a in (e if isinstance(e, list) else [e])]


def random_shard_map(rng: random.Random) -> Case:
    names, sizes, types = _mesh(rng, False)
    size_of = dict(zip(names, sizes, strict=True))
    manual = names if rng.random() < 0.7 else rng.sample(names, rng.randint(1, len(names)))
    rank = rng.randint(1, 3)
    shape = [rng.choice((1, 2, 4, 8)) for _ in range(rank)]
    args = []
    for _ in range(rng.randint(1, 2)):
        in_spec = _random_spec(rng, manual, rank)
        factors = [
            math.prod(size_of[a] for a in _axes_of([e])) for e in in_spec + [None] * (rank - len(in_spec))
        ]
        global_shape = [n * f for n, f in zip(shape, factors, strict=True)]
        explicit = [n for n, t in zip(names, types, strict=True) if t == "Explicit"]
        others = [a for a in explicit if a not in manual]
        if rng.random() < 0.75:
            arg_spec = list(in_spec)  # the argument laid out as in_specs say
            # an Explicit axis that is not manual may split a dimension the in_spec leaves alone
            for i in range(rank):
                if others and i < len(arg_spec) and arg_spec[i] is None and rng.random() < 0.4:
                    axis = others.pop()
                    if global_shape[i] % size_of[axis] == 0:
                        arg_spec[i] = axis
        else:
            arg_spec = _random_spec(rng, names, rank)
            arg_spec = [
                e
                if e is None
                or all(global_shape[i] % math.prod(size_of[a] for a in _axes_of([e])) == 0 for _ in [0])
                else None
                for i, e in enumerate(arg_spec)
            ]
        args.append({"shape": global_shape, "spec": arg_spec, "in_spec": in_spec})
    ops = [_random_op(rng, manual, len(args)) for _ in range(rng.randint(0, 4))]
    out_spec = _random_spec(rng, manual, 1 if rng.random() < 0.2 else rank)
    return {
        "names": names,
        "sizes": sizes,
        "types": types,
        "axis_names": None if set(manual) == set(names) and rng.random() < 0.8 else sorted(manual),
        "args": args,
        "ops": ops,
        "out_spec": out_spec,
        "check_vma": rng.random() < 0.9,
        "infer": rng.random() < 0.1,
    }


def _random_op(rng: random.Random, manual: list[str], n_args: int) -> list[Any]:
    axes = rng.sample(manual, rng.randint(1, len(manual)))
    kind = rng.choice(
        (
            "add",
            "add",
            "scale",
            "psum",
            "pmax",
            "pmean",
            "all_gather",
            "psum_scatter",
            "ppermute",
            "all_to_all",
            "axis_index",
            "pcast",
            "sum",
        )
    )
    if kind == "add":
        return [kind, rng.randrange(n_args)]
    if kind == "all_gather":
        return [kind, axes, rng.randint(0, 2), rng.random() < 0.5]
    if kind == "psum_scatter":
        return [kind, axes, rng.randint(0, 2), rng.random() < 0.7]
    if kind == "all_to_all":
        return [kind, axes, rng.randint(0, 2), rng.randint(0, 2), rng.random() < 0.7]
    if kind == "sum":
        return [kind, rng.randint(0, 2)]
    if kind == "scale":
        return [kind]
    return [kind, axes]


def _error(e: Exception) -> str:
    if isinstance(e, TypeRejected):
        return str(e.problem.data["jax_error"])
    assert isinstance(e, ShapeError)
    return e.jax_error


def ours_shard_map(case: Case) -> Outcome:
    """The type of each block, of each step, and of the output outside; a rejection ends it."""
    mesh = our_mesh(case)
    manual = frozenset(case["axis_names"]) if case["axis_names"] is not None else None
    inside = manual_mesh(mesh, manual)
    outcome: Outcome = []
    blocks: list[ShardedType] = []
    try:
        for arg in case["args"]:
            shape = tuple(arg["shape"])
            outer = ShardedType(shape, FLOAT32, mesh, explicit_spec(mesh, our_spec(arg["spec"]), len(shape)))
            in_spec = inferred_in_spec(outer, inside) if case["infer"] else our_spec(arg["in_spec"])
            blocks.append(
                block(outer, in_spec, inside, check_vma=case["check_vma"], infer_in_specs=case["infer"])
            )
    except (TypeRejected, ShapeError) as e:
        return [["error", _error(e)]]
    outcome.extend(["ok", b.jax_type] for b in blocks)
    v = blocks[0]
    try:
        for op in case["ops"]:
            v = _our_step(op, v, blocks, inside)
            v = v if case["check_vma"] else unchecked(v)
            outcome.append(["ok", v.jax_type])
        out = output(v, our_spec(case["out_spec"]), mesh, check_vma=case["check_vma"])
    except (TypeRejected, ShapeError) as e:
        outcome.append(["error", _error(e)])
        return outcome
    outcome.append(["ok", out.jax_type])
    return outcome


def resolved(
    op: list[Any], rank: int, blocks_shapes: list[tuple[int, ...]], shape: tuple[int, ...]
) -> list[Any]:
    """The op as both sides apply it to a value of `shape`: dimensions taken modulo the rank (a
    rank-0 value is permuted instead), and an operand of another shape replaced by a scalar."""
    kind = op[0]
    if kind == "add" and blocks_shapes[op[1]] != shape:
        return ["scale"]
    if kind in ("all_gather", "psum_scatter", "all_to_all"):
        if kind == "all_gather" and not op[3]:
            return [kind, op[1], op[2] % (rank + 1), op[3]]
        if not rank:
            return ["ppermute", op[1]]
        if kind == "all_to_all":
            return [kind, op[1], op[2] % rank, op[3] % rank, op[4]]
        return [kind, op[1], op[2] % rank, op[3]]
    return op


def _our_step(op: list[Any], v: ShardedType, blocks: list[ShardedType], inside: Mesh) -> ShardedType:
    op = resolved(op, v.rank, [b.shape for b in blocks], v.shape)
    kind = op[0]
    if kind == "add":
        return combine(binary("add", v, blocks[op[1]]), (v, blocks[op[1]]))
    if kind == "scale":
        return combine(binary("multiply", v, scalar(v, FLOAT32)), (v,))
    if kind in ("psum", "pmax", "pmean"):
        return collective_reduce(kind, v, op[1])
    if kind == "all_gather":
        return all_gather(v, op[1], op[2], tiled=op[3])
    if kind == "psum_scatter":
        return psum_scatter(v, op[1], op[2], tiled=op[3])
    if kind == "ppermute":
        return ppermute(v, op[1])
    if kind == "all_to_all":
        return all_to_all(v, op[1], op[2], op[3], tiled=op[4])
    if kind == "axis_index":
        index = axis_index(inside, op[1])
        as_float = ShardedType((), FLOAT32, inside, (), varying=index.varying)
        return combine(binary("add", v, as_float), (v, as_float))
    if kind == "pcast":
        return pcast_varying(v, op[1])
    if kind == "sum":
        return combine(reduce("sum", v, op[1] % v.rank if v.rank else None), (v,))
    raise AssertionError(kind)


def random_vmap(rng: random.Random) -> Case:
    names, sizes, _ = _mesh(rng, True)
    size_of = dict(zip(names, sizes, strict=True))
    batch_axes = _random_spec(rng, names, 1)
    batch = batch_axes[0] if batch_axes else None
    factor = math.prod(size_of[a] for a in _axes_of([batch]))
    size = factor * rng.choice((1, 2))
    args = []
    for _ in range(rng.randint(1, 2)):
        rank = rng.randint(1, 3)
        in_axis = rng.choice((0, 0, 1, -1, None)) if rank > 1 else rng.choice((0, 0, None))
        shape = [rng.choice((2, 4, 8)) for _ in range(rank)]
        spec = _random_spec(rng, [a for a in names if a not in _axes_of([batch])], rank)
        spec = spec + [None] * (rank - len(spec))
        spec = [
            e if shape[i] % math.prod(size_of[a] for a in _axes_of([e])) == 0 else None
            for i, e in enumerate(spec)
        ]
        if in_axis is not None:
            d = in_axis % rank
            shape[d] = size
            spec[d] = batch if rng.random() < 0.85 else None
        elif rng.random() < 0.1 and batch is not None:
            spec[0], shape[0] = batch, size
        args.append({"shape": shape, "spec": spec, "in_axis": in_axis})
    spmd = None
    if rng.random() < 0.5:
        spmd = _axes_of([batch]) if batch is not None and rng.random() < 0.6 else rng.sample(names, 1)
    return {
        "names": names,
        "sizes": sizes,
        "types": ["Explicit"] * len(names),
        "args": args,
        "body": rng.choice(("identity", "scale", "sum", "constant")),
        "out_axis": rng.choice((0, 0, 1, -1)),
        "spmd": spmd,
    }


def ours_vmap(case: Case) -> Outcome:
    """The type of the first argument inside the body, of the body's result, and outside."""
    mesh = our_mesh(case)
    typed = []
    for arg in case["args"]:
        shape = tuple(arg["shape"])
        typed.append(
            (
                ShardedType(shape, FLOAT32, mesh, explicit_spec(mesh, our_spec(arg["spec"]), len(shape))),
                arg["in_axis"],
            )
        )
    outcome: Outcome = []
    try:
        mapped = mapping(typed, tuple(case["spmd"]) if case["spmd"] is not None else None)
        inner = element(*typed[0])
        outcome.append(["ok", inner.jax_type])
        body = case["body"]
        if body == "scale":
            result = binary("multiply", inner, scalar(inner, INT32))
        elif body == "sum":
            result = reduce("sum", inner, None)
        elif body == "constant":
            result = ShardedType((3,), FLOAT32, mesh, ((),))
        else:
            result = inner
        outcome.append(["ok", result.jax_type])
        outcome.append(["ok", batched(result, mapped, case["out_axis"]).jax_type])
    except (TypeRejected, ShapeError) as e:
        outcome.append(["error", _error(e)])
    return outcome
