"""Differential test of sharding in types: shardls' propagation against `jax.typeof` of real JAX.

Seeded random programs (types_cases.py): meshes of 1-3 axes (mostly Explicit, some mixed with
Auto, some all Auto), random input shapes/dtypes/specs (some unreduced or reduced), chains of 1-6
operations (elementwise with broadcasting and scalars, where, matmul/dot/einsum with and without
out_sharding, reshape with and without out_sharding, transpose, reductions with keepdims,
argmax, cumsum, reshard, astype, zeros_like; indexing with integers, static and strided slices,
`None`, `...`, traced scalars and integer arrays, `x.at[...].get(out_sharding=)`, `lax.slice`,
`lax.dynamic_slice`, concatenate (also along a sharded dim and with `axis=None`), stack, split and
array_split, `jax.nn` activations and softmax, `broadcast_to`; `x.at[...].set/add/subtract/
multiply/min/max` with and without out_sharding, traced boolean masks, `jnp.take`,
`jnp.take_along_axis`, `jnp.sort`/`argsort` and `lax.top_k`). Every intermediate type must print
exactly as JAX prints it (shape, dtype, weak type, spec, unreduced/reduced), and a rejected program must
fail with JAX's exception class. JAX traces on an AbstractMesh: no devices, nothing runs.
"""

from __future__ import annotations

from core_types_support import run_differential

SEED = 20261201
N_PROGRAMS = 10_000


def test_types_agree_with_jax_on_random_programs() -> None:
    run = run_differential(SEED, N_PROGRAMS)
    disagreements, outcomes, codes = run.disagreements, run.outcomes, run.codes
    assert not disagreements, f"{len(disagreements)} disagreements, e.g.\n" + "\n".join(disagreements[:10])
    assert outcomes["ok"] >= N_PROGRAMS // 2, outcomes
    assert outcomes["ShardingTypeError"] >= N_PROGRAMS // 10, outcomes
    # Every sharding rule is exercised, so agreement is not vacuous.
    for code in (
        "SH301",
        "SH302",
        "SH303",
        "SH304",
        "SH305",
        "SH306",
        "SH307",
        "SH308",
        "SH309",
        "SH311",
        "SH313",
        "SH314",
        "SH315",
        "SH001",
    ):
        assert codes[code] >= 5, codes
