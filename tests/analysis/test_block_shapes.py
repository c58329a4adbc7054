"""Collectives in shard_map bodies and the array functions real bodies compute with keep the
block's rank, and its sizes when the body's mesh is known (maxtext ulysses_attention.py,
deepseek_batchsplit.py). Where a size rests on a mesh shardls does not know, it stays unknown."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
from functools import partial
import jax, jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("fsdp", "context"), axis_types=(AxisType.Auto, AxisType.Auto))
"""


def test_untiled_collectives_move_insert_and_remove_dims() -> None:
    analysis = analyze(
        HEADER
        + """
@partial(jax.shard_map, mesh=mesh, in_specs=P("fsdp", "context"), out_specs=P("fsdp", None, "context"))
def moved(x):
    return jax.lax.all_to_all(x, "context", 1, 1, tiled=False)[:, None, :]

@partial(jax.shard_map, mesh=mesh, in_specs=P(None, "fsdp"), out_specs=P("fsdp"), check_vma=False)
def scattered(x):
    return jax.lax.psum_scatter(x, "fsdp")

a = moved(jnp.ones((8, 16)))
b = scattered(jnp.ones((2, 6)))
"""
    )
    assert site_named(analysis, "a").shape == (8, 1, 16)
    assert site_named(analysis, "b").shape == (6,)


def test_a_collective_over_an_axis_of_an_unknown_mesh_keeps_only_the_rank() -> None:
    analysis = analyze(
        HEADER
        + """
def exchange(x, some_mesh):
    f = jax.shard_map(
        lambda t: jax.lax.all_gather(t, "context", axis=1, tiled=True),
        mesh=some_mesh, in_specs=P("fsdp"), out_specs=P("fsdp"),
    )
    return f(x)

y = exchange(jnp.ones((8, 16)), unknown_mesh)
z = jax.device_put(jax.lax.all_gather(jnp.ones((8, 16)), "context", tiled=True), NamedSharding(mesh, P()))
"""
    )
    out = [s for s in analysis.sites if s.kind.value == "shard_map_out"]
    assert out and all(s.shape is None or len(s.shape) == 2 for s in out)
    z = site_named(analysis, "z")
    assert z.shape is not None and len(z.shape) == 2 and z.shard_shape is not None
    assert not isinstance(z.shape[0], int) and z.shape[1] == 16
    assert not analysis.diagnostics


def test_array_functions_bodies_compute_with() -> None:
    analysis = analyze(
        HEADER
        + """
x = jnp.ones((2, 4, 8))
t = jax.device_put(jnp.transpose(x, (2, 0, 1)), NamedSharding(mesh, P("context")))
r = jax.device_put(jnp.repeat(x, 2, axis=1), NamedSharding(mesh, P(None, "context")))
flat = jax.device_put(jnp.repeat(x, 2), NamedSharding(mesh, P("context")))
m = jax.device_put(jnp.maximum(x, jnp.ones((8,))), NamedSharding(mesh, P("fsdp")))
mask = jax.device_put(jnp.greater(x, 0.5), NamedSharding(mesh, P("fsdp")))
low = jax.device_put(jnp.tril(jnp.ones((4, 4))), NamedSharding(mesh, P("context")))
bad = jax.device_put(jnp.transpose(x, (0, 0, 1)), NamedSharding(mesh, P("fsdp")))
"""
    )
    assert site_named(analysis, "t").shard_shape == (2, 2, 4)
    assert site_named(analysis, "r").shard_shape == (2, 2, 8)
    assert site_named(analysis, "flat").shape == (128,)
    assert site_named(analysis, "m").shard_shape == (1, 4, 8)
    mask = site_named(analysis, "mask")
    assert mask.shard_shape == (1, 4, 8) and mask.dtype is not None and mask.dtype.name == "bool"
    assert site_named(analysis, "low").shard_shape == (1, 4)
    assert site_named(analysis, "bad").shape is None


def test_dtype_limits_are_numbers_so_adding_one_keeps_the_shape() -> None:
    analysis = analyze(
        HEADER
        + """
def quantize(x, scale_dtype=jnp.float16):
    amax = jnp.max(jnp.abs(x), axis=(x.ndim - 1,), keepdims=True)
    scale = (amax / 127.0 + jnp.finfo(scale_dtype).tiny).astype(scale_dtype)
    return jnp.round(x / scale).astype(jnp.int8), scale.reshape(scale.shape[:-1])

quant, scale = quantize(jnp.ones((8, 16, 4)), scale_dtype=jnp.bfloat16)
q = jax.device_put(quant, NamedSharding(mesh, P("fsdp")))
s = jax.device_put(scale, NamedSharding(mesh, P(None, "context")))
shift = jax.device_put(jnp.ones((8,)) * jnp.iinfo(jnp.int8).max, NamedSharding(mesh, P("fsdp")))
unknown = jax.device_put(jnp.ones((8,)) + jnp.finfo(some_dtype).eps, NamedSharding(mesh, P("fsdp")))
"""
    )
    q, s = site_named(analysis, "q"), site_named(analysis, "s")
    assert q.shard_shape == (4, 16, 4) and q.dtype is not None and q.dtype.name == "int8"
    assert s.shard_shape == (8, 4) and s.dtype is not None and s.dtype.name == "bfloat16"
    assert site_named(analysis, "shift").shard_shape == (4,)
    assert site_named(analysis, "unknown").shape is None


def test_numpy_samplers_take_their_size_and_reject_what_numpy_rejects() -> None:
    analysis = analyze(
        HEADER
        + """
import numpy as np
rng = np.random.default_rng(0)
a = jax.device_put(rng.normal(size=(8, 4)), NamedSharding(mesh, P("fsdp")))
b = jax.device_put(np.random.randn(8, "4"), NamedSharding(mesh, P("fsdp")))
c = jax.device_put(rng.integers(0, 9), NamedSharding(mesh, P()))
"""
    )
    assert site_named(analysis, "a").shard_shape == (4, 4)
    assert site_named(analysis, "b").shape is None
    assert site_named(analysis, "c").shape is None


def test_a_parameter_given_a_pytree_sees_the_tree_of_its_blocks() -> None:
    """maxtext deepseek_batchsplit.gather_weights: `fn(weights)` unpacks a nested tuple of
    weights split by a nested tuple of in_specs; its outputs follow from the blocks."""
    analysis = analyze(
        HEADER
        + """
def fn(weights):
    norm, (wq, scale) = weights
    return norm, (jax.lax.all_gather(wq, "fsdp", tiled=True), scale)

weights = (jnp.ones((8,)), (jnp.ones((8, 4)), {"s": jnp.ones((4,))}["s"]))
gathered = jax.shard_map(
    fn,
    mesh=mesh,
    in_specs=((P(None), (P("fsdp", None), P(None))),),
    out_specs=(P(None), (P(None, None), P(None))),
    check_vma=False,
)(weights)
"""
    )
    outputs = {s.name: s.shape for s in analysis.sites if s.kind.value == "shard_map_out"}
    assert outputs == {"gathered[0]": (8,), "gathered[1][0]": (8, 4), "gathered[1][1]": (4,)}
