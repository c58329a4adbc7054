"""Both sides of the sharding-in-types differential test: one random program (types_cases.py)
run by shardls' propagation and traced by JAX (`jax.jit(f).trace` on ShapeDtypeStructs of an
AbstractMesh, under `use_abstract_mesh`: no devices, nothing executed)."""

from __future__ import annotations

import collections
import random
import warnings
from dataclasses import dataclass, field
from typing import Any

from types_cases import Program, index_items, mesh_of, spec_of, typed_input

from shardls.core import parse_dtype
from shardls.core.typing import (
    ShapeError,
    ShardedType,
    TypeRejected,
    activation,
    arg_reduce,
    argsort,
    array_split,
    astype,
    binary,
    broadcast_to,
    concatenate,
    cumulative,
    dot,
    dynamic_slice,
    einsum,
    full_like,
    index,
    lax_slice,
    matmul,
    reduce,
    relu,
    reshape,
    reshard,
    scalar,
    scatter,
    sort,
    split,
    stack,
    take,
    take_along_axis,
    top_k,
    transpose,
    unary,
    where,
)
from shardls.core.typing.promotion import FLOAT32, INT32


def apply_ours(program: Program) -> list[ShardedType]:
    """The type after each operation (the first input first); raises TypeRejected/ShapeError."""
    mesh = mesh_of(program)
    inputs = [typed_input(mesh, entry) for entry in program["inputs"]]
    x = inputs[0]
    out = [x]
    for op in program["ops"]:
        x = _apply(op, x, inputs)
        out.append(x)
    return out


def _spec(entries: Any) -> Any:
    return None if entries is None else spec_of(entries)


def _apply(op: list[Any], x: ShardedType, inputs: list[ShardedType]) -> ShardedType:
    name = op[0]
    if name == "binary":
        other = op[2]
        y = scalar(x, INT32 if other == "int" else FLOAT32) if isinstance(other, str) else inputs[other]
        return binary(op[1], x, y)
    if name == "unary":
        return relu(x) if op[1] == "relu" else unary(op[1], x)
    if name == "where":
        return where(binary("greater", x, scalar(x, INT32)), x, inputs[op[1]])
    if name == "matmul":
        return matmul(x, inputs[op[1]], out_sharding=_spec(op[2]))
    if name == "dot":
        return dot(x, inputs[op[1]], out_sharding=_spec(op[2]))
    if name == "einsum":
        return einsum(op[1], x, inputs[op[2]], out_sharding=_spec(op[3]))
    if name == "reshape":
        return reshape(x, op[1], out_sharding=_spec(op[2]))
    if name == "transpose":
        return transpose(x, op[1])
    if name == "reduce":
        axis = tuple(op[2]) if isinstance(op[2], list) else op[2]
        return reduce(op[1], x, axis, keepdims=op[3])
    if name == "argmax":
        return arg_reduce("argmax", x, op[1])
    if name == "cumsum":
        return cumulative("cumsum", x, op[1])
    if name == "reshard":
        return reshard(x, spec_of(op[1]))
    if name == "astype":
        return astype(x, parse_dtype(op[1]))
    if name == "zeros_like":
        return full_like(x)
    if name == "activation":
        return activation(op[1], x, op[2])
    if name == "index":
        return index(x, index_items(op[1], inputs))
    if name == "at_get":
        return index(x, index_items(op[1], inputs), out_sharding=_spec(op[2]))
    if name == "lax_slice":
        return lax_slice(x, op[1], op[2], op[3])
    if name == "dynamic_slice":
        return dynamic_slice(x, op[1])
    if name == "concatenate":
        return concatenate([x, *(inputs[i] for i in op[1])], op[2])
    if name == "stack":
        return stack([x, *(inputs[i] for i in op[1])], op[2])
    if name == "split":
        pieces = (split if op[1] == "split" else array_split)(x, op[2], op[3])
        return pieces[op[4] % len(pieces)]
    if name == "broadcast_to":
        return broadcast_to(x, tuple(op[1]))
    if name == "at_update":
        other = op[3]
        values = scalar(x, INT32 if other == "int" else FLOAT32) if isinstance(other, str) else inputs[other]
        return scatter(x, index_items(op[2], inputs), values, out_sharding=_spec(op[4]))
    if name == "take":
        return take(x, inputs[op[1]], op[2])
    if name == "take_along_axis":
        return take_along_axis(x, inputs[op[1]], op[2])
    if name == "sort":
        return (sort if op[1] == "sort" else argsort)(x, op[2])
    if name == "top_k":
        return top_k(x, op[1], op[2])[op[3]]
    raise ValueError(name)


def ours(program: Program) -> tuple[str, list[str]]:
    """("ok", types) or (JAX's exception class, [code]) as shardls predicts it."""
    try:
        return "ok", [t.jax_type for t in apply_ours(program)]
    except TypeRejected as rejected:
        return str(rejected.problem.data["jax_error"]), [rejected.problem.code]
    except ShapeError as error:
        return error.jax_error, ["shape"]


def jax_outcome(program: Program) -> tuple[str, list[str]]:
    import jax
    import jax.numpy as jnp
    from jax.sharding import AbstractMesh, AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    m = program["mesh"]
    mesh = AbstractMesh(
        tuple(m["sizes"]), tuple(m["names"]), axis_types=tuple(getattr(AxisType, t) for t in m["types"])
    )

    def p(entries: Any, unreduced: Any = (), reduced: Any = ()) -> Any:
        if entries is None:
            return None
        return P(
            *[tuple(e) if isinstance(e, list) else e for e in entries],
            unreduced=set(unreduced),
            reduced=set(reduced),
        )

    def run(*args: Any) -> Any:
        x = args[0]
        outs = [x]
        for op in program["ops"]:
            name = op[0]
            if name == "binary":
                other = op[2]
                y = (1 if other == "int" else 1.0) if isinstance(other, str) else args[other]
                x = getattr(jnp, op[1])(x, y)
            elif name == "unary":
                x = (
                    jax.nn.relu(x)
                    if op[1] == "relu"
                    else jax.nn.sigmoid(x)
                    if op[1] == "sigmoid"
                    else getattr(jnp, op[1])(x)
                )
            elif name == "where":
                x = jnp.where(x > 0, x, args[op[1]])
            elif name == "matmul":
                x = jnp.matmul(x, args[op[1]], out_sharding=p(op[2]))
            elif name == "dot":
                x = jnp.dot(x, args[op[1]], out_sharding=p(op[2]))
            elif name == "einsum":
                x = jnp.einsum(op[1], x, args[op[2]], out_sharding=p(op[3]))
            elif name == "reshape":
                x = jnp.reshape(x, op[1], out_sharding=p(op[2]))
            elif name == "transpose":
                x = jnp.transpose(x, op[1])
            elif name == "reduce":
                axis = tuple(op[2]) if isinstance(op[2], list) else op[2]
                x = getattr(jnp, op[1])(x, axis=axis, keepdims=op[3])
            elif name == "argmax":
                x = jnp.argmax(x, axis=op[1])
            elif name == "cumsum":
                x = jnp.cumsum(x, axis=op[1])
            elif name == "reshard":
                x = jax.sharding.reshard(x, p(op[1]))
            elif name == "astype":
                x = x.astype(op[1])
            elif name == "zeros_like":
                x = jnp.zeros_like(x)
            elif name == "activation":
                f = getattr(jax.nn, op[1])
                x = f(x, axis=op[2]) if op[1] in ("softmax", "log_softmax") else f(x)
            elif name == "index":
                x = x[index_items(op[1], args)]
            elif name == "at_get":
                x = x.at[index_items(op[1], args)].get(out_sharding=p(op[2]))
            elif name == "lax_slice":
                x = jax.lax.slice(x, op[1], op[2], op[3])
            elif name == "dynamic_slice":
                x = jax.lax.dynamic_slice(x, [0] * x.ndim, op[1])
            elif name == "concatenate":
                x = jnp.concatenate([x, *(args[i] for i in op[1])], axis=op[2])
            elif name == "stack":
                x = jnp.stack([x, *(args[i] for i in op[1])], axis=op[2])
            elif name == "split":
                pieces = getattr(jnp, op[1])(x, op[2], axis=op[3])
                x = pieces[op[4] % len(pieces)]
            elif name == "broadcast_to":
                x = jnp.broadcast_to(x, op[1])
            elif name == "at_update":
                other = op[3]
                y = (1 if other == "int" else 1.0) if isinstance(other, str) else args[other]
                x = getattr(x.at[index_items(op[2], args)], op[1])(y, out_sharding=p(op[4]))
            elif name == "take":
                x = jnp.take(x, args[op[1]], axis=op[2])
            elif name == "take_along_axis":
                x = jnp.take_along_axis(x, args[op[1]], axis=op[2])
            elif name == "sort":
                x = getattr(jnp, op[1])(x, axis=op[2])
            elif name == "top_k":
                x = jax.lax.top_k(x, op[1], axis=op[2])[op[3]]
            outs.append(x)
        return outs

    args = [
        jax.ShapeDtypeStruct(
            tuple(e["shape"]),
            jnp.dtype(e["dtype"]),
            sharding=NamedSharding(mesh, p(e["spec"], e.get("unreduced", ()), e.get("reduced", ()))),
        )
        for e in program["inputs"]
    ]
    try:
        with jax.sharding.use_abstract_mesh(mesh):
            traced = jax.jit(run).trace(*args)
    except Exception as exc:  # every failure is data for the comparison
        return type(exc).__name__, [str(exc)[:300]]
    return "ok", [str(a) for a in traced.jaxpr.out_avals]


def eager_outcome(case: Program) -> tuple[str, list[str]]:
    """One `index`/`at_get` operation run eagerly on a concrete array (real, fake CPU devices):
    the path where JAX refuses slices of a sharded array and gathers instead. Needs
    `--xla_force_host_platform_device_count` ≥ the mesh's size, set before jax is imported."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import PartitionSpec as P

    m = case["mesh"]
    size = 1
    for n in m["sizes"]:
        size *= n
    mesh = jax.make_mesh(
        tuple(m["sizes"]),
        tuple(m["names"]),
        axis_types=tuple(getattr(AxisType, t) for t in m["types"]),
        devices=jax.devices()[:size],
    )

    def p(entries: Any) -> Any:
        return None if entries is None else P(*[tuple(e) if isinstance(e, list) else e for e in entries])

    try:
        with jax.set_mesh(mesh):
            args = [
                jax.device_put(jnp.zeros(tuple(e["shape"]), e["dtype"]), NamedSharding(mesh, p(e["spec"])))
                for e in case["inputs"]
            ]
            (op,) = case["ops"]
            where = index_items(op[1], args)
            x = args[0][where] if op[0] == "index" else args[0].at[where].get(out_sharding=p(op[2]))
            return "ok", [str(jax.typeof(args[0])), str(jax.typeof(x))]
    except Exception as exc:  # every failure is data for the comparison
        return type(exc).__name__, [str(exc)[:300]]


def ours_eager(case: Program) -> tuple[str, list[str]]:
    """`ours` for an eager case: the same single operation with `concrete=True`."""
    try:
        mesh = mesh_of(case)
        inputs = [typed_input(mesh, entry) for entry in case["inputs"]]
        (op,) = case["ops"]
        out_sharding = _spec(op[2]) if op[0] == "at_get" else None
        x = index(inputs[0], index_items(op[1], inputs), concrete=True, out_sharding=out_sharding)
        return "ok", [inputs[0].jax_type, x.jax_type]
    except TypeRejected as rejected:
        return str(rejected.problem.data["jax_error"]), [rejected.problem.code]
    except ShapeError as error:
        return error.jax_error, ["shape"]


def eager_worker() -> None:
    """Reads cases (JSON lines) on stdin, writes JAX's eager outcome of each (JSON lines)."""
    import json
    import sys
    import warnings

    warnings.simplefilter("ignore")
    for line in sys.stdin:
        print(json.dumps(eager_outcome(json.loads(line))), flush=True)


@dataclass
class DifferentialRun:
    """The tallies of one differential run: JAX's outcome classes, the codes shardls gave,
    the operations generated, and every disagreement (program, ours, JAX's)."""

    programs: int = 0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    codes: collections.Counter[str] = field(default_factory=collections.Counter)
    operations: collections.Counter[str] = field(default_factory=collections.Counter)
    disagreements: list[str] = field(default_factory=list)


def run_differential(seed: int, count: int) -> DifferentialRun:
    """`count` random programs from `seed`, each run by shardls and traced by JAX."""
    from types_cases import random_program

    rng = random.Random(seed)
    run = DifferentialRun()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(count):
            program = random_program(rng)
            mine, theirs = ours(program), jax_outcome(program)
            run.programs += 1
            run.outcomes[theirs[0]] += 1
            run.operations.update(op[0] for op in program["ops"])
            if mine[0] != "ok":
                run.codes[mine[1][0]] += 1
            if mine[0] != theirs[0] or (mine[0] == "ok" and mine[1] != theirs[1]):
                run.disagreements.append(f"{program}\n  shardls {mine}\n  jax     {theirs}")
    return run
