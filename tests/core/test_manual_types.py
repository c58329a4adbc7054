"""Differential test of types inside `shard_map` bodies (Manual axes, varying manual axes),
of the collectives, of out_specs checks, and of `jax.vmap` on Explicit meshes: shardls' core
against `jax.typeof` in real JAX.

Seeded random cases (manual_cases.py). JAX traces each case with `jax.eval_shape` on an
AbstractMesh (no devices, nothing runs); the body records `jax.typeof` of every block and of
every step. Every type must print exactly as JAX prints it, and where JAX raises, shardls must
reject the same step with JAX's exception class.
"""

from __future__ import annotations

import collections
import random
import warnings
from typing import Any

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import AxisType as JaxAxisType
from jax.sharding import PartitionSpec as P
from manual_cases import (
    Case,
    Outcome,
    ours_shard_map,
    ours_vmap,
    random_shard_map,
    random_vmap,
    resolved,
)

from shardls.core.typing.manual import NOT_MODELLED

SEED = 20261202
N_SHARD_MAP = 700
N_VMAP = 300


class _Stop(Exception):
    """Raised by the body after a step fails, so the failure is recorded where it happened."""


def _mesh(case: Case) -> AbstractMesh:
    return AbstractMesh(
        tuple(case["sizes"]),
        tuple(case["names"]),
        axis_types=tuple(getattr(JaxAxisType, t) for t in case["types"]),
    )


def _p(entries: list[Any]) -> P:
    return P(*[tuple(e) if isinstance(e, list) else e for e in entries])


def _struct(mesh: AbstractMesh, arg: dict[str, Any]) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(
        tuple(arg["shape"]), jnp.float32, sharding=NamedSharding(mesh, _p(arg["spec"]))
    )


def _record(outcome: Outcome, step: Any) -> Any:
    try:
        value = step()
    except Exception as e:
        outcome.append(["error", type(e).__name__])
        raise _Stop from e
    outcome.append(["ok", str(jax.typeof(value))])
    return value


def _jax_step(op: list[Any], v: Any, blocks: list[Any]) -> Any:
    op = resolved(op, v.ndim, [b.shape for b in blocks], v.shape)
    kind = op[0]
    lax = jax.lax
    if kind == "add":
        return v + blocks[op[1]]
    if kind == "scale":
        return v * 0.5
    if kind in ("psum", "pmax", "pmean"):
        return getattr(lax, kind)(v, tuple(op[1]))
    if kind == "all_gather":
        return lax.all_gather(v, tuple(op[1]), axis=op[2], tiled=op[3])
    if kind == "psum_scatter":
        return lax.psum_scatter(v, tuple(op[1]), scatter_dimension=op[2], tiled=op[3])
    if kind == "ppermute":
        size = lax.axis_size(tuple(op[1]))
        return lax.ppermute(v, tuple(op[1]), [(i, (i + 1) % size) for i in range(size)])
    if kind == "all_to_all":
        return lax.all_to_all(v, tuple(op[1]), op[2], op[3], tiled=op[4])
    if kind == "axis_index":
        return v + lax.axis_index(tuple(op[1])).astype(jnp.float32)
    if kind == "pcast":
        return lax.pcast(v, tuple(op[1]), to="varying")
    if kind == "sum":
        return v.sum(axis=op[1] % v.ndim if v.ndim else None)
    raise AssertionError(kind)


def jax_shard_map(case: Case) -> Outcome:
    mesh = _mesh(case)
    outcome: Outcome = []

    def body(*blocks: Any) -> Any:
        outcome.extend(["ok", str(jax.typeof(b))] for b in blocks)
        v = blocks[0]
        for op in case["ops"]:
            v = _record(outcome, lambda op=op, v=v: _jax_step(op, v, list(blocks)))
        return v

    kwargs: dict[str, Any] = {"mesh": mesh, "out_specs": _p(case["out_spec"]), "check_vma": case["check_vma"]}
    if not case["infer"]:
        kwargs["in_specs"] = tuple(_p(a["in_spec"]) for a in case["args"])
    if case["axis_names"] is not None:
        kwargs["axis_names"] = frozenset(case["axis_names"])

    def call(*args: Any) -> Any:
        out = jax.shard_map(body, **kwargs)(*args)
        outcome.append(["ok", str(jax.typeof(out))])
        return out

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jax.eval_shape(call, *(_struct(mesh, a) for a in case["args"]))
    except _Stop:
        pass
    except Exception as e:
        outcome.append(["error", type(e).__name__])
    return outcome


def jax_vmap(case: Case) -> Outcome:
    mesh = _mesh(case)
    outcome: Outcome = []

    def body(*args: Any) -> Any:
        outcome.append(["ok", str(jax.typeof(args[0]))])
        a = args[0]
        kind = case["body"]
        result = (
            a * 2
            if kind == "scale"
            else a.sum()
            if kind == "sum"
            else jnp.zeros(3)
            if kind == "constant"
            else a
        )
        outcome.append(["ok", str(jax.typeof(result))])
        return result

    spmd = tuple(case["spmd"]) if case["spmd"] is not None else None
    mapped = jax.vmap(
        body,
        in_axes=tuple(a["in_axis"] for a in case["args"]),
        out_axes=case["out_axis"],
        spmd_axis_name=spmd,
    )

    def call(*args: Any) -> Any:
        out = mapped(*args)
        outcome.append(["ok", str(jax.typeof(out))])
        return out

    try:
        with jax.sharding.use_abstract_mesh(mesh), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jax.eval_shape(call, *(_struct(mesh, a) for a in case["args"]))
    except Exception as e:
        outcome.append(["error", type(e).__name__])
    return outcome


def _compare(
    kind: str, cases: list[Case], ours: Any, theirs: Any
) -> tuple[list[str], collections.Counter[str]]:
    disagreements = []
    endings: collections.Counter[str] = collections.Counter()
    for case in cases:
        mine, jax_says = ours(case), theirs(case)
        endings[jax_says[-1][1] if jax_says[-1][0] == "error" else "ok"] += 1
        if mine[-1] == ["error", NOT_MODELLED]:
            # no type from there on: what came before must still agree
            endings["untyped by shardls"] += 1
            mine, jax_says = mine[:-1], jax_says[: len(mine) - 1]
        if mine != jax_says:
            disagreements.append(f"{kind} {case}\n  shardls {mine}\n  jax     {jax_says}")
    return disagreements, endings


def test_shard_map_bodies_agree_with_jax() -> None:
    rng = random.Random(SEED)
    cases = [random_shard_map(rng) for _ in range(N_SHARD_MAP)]
    disagreements, endings = _compare("shard_map", cases, ours_shard_map, jax_shard_map)
    assert not disagreements, f"{len(disagreements)} disagreements, e.g.\n" + "\n".join(disagreements[:8])
    assert endings["ok"] >= N_SHARD_MAP // 3, endings
    assert endings["ValueError"] >= N_SHARD_MAP // 20, endings
    assert endings["untyped by shardls"] <= N_SHARD_MAP // 10, endings


def test_vmap_agrees_with_jax() -> None:
    rng = random.Random(SEED + 1)
    cases = [random_vmap(rng) for _ in range(N_VMAP)]
    disagreements, endings = _compare("vmap", cases, ours_vmap, jax_vmap)
    assert not disagreements, f"{len(disagreements)} disagreements, e.g.\n" + "\n".join(disagreements[:8])
    assert endings["ok"] >= N_VMAP // 2, endings
    assert endings["ValueError"] >= N_VMAP // 20, endings
