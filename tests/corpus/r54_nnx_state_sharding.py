"""r54: Flax NNX's lifted transforms lay a module out variable by variable (flax
tests/nnx/transforms_test.py, the NNX sharding guides): `nnx.jit(in_shardings=...)` with an
`nnx.StateSharding({filter: sharding})` resharding a module in place, `out_shardings=` an
`nnx.prefix(template, {filter: sharding})` for a module the function builds, one sharding as the
prefix of a whole module, `nnx.shard_map(in_specs=...)` with a StateSharding read from an
`nnx.State` of specs (a module whose in_spec splits nothing reaches the body whole), and
`nnx.jit_partial(f, *bound, in_shardings=...)`, whose in_shardings cover the bound arguments
first. The filters are paths (`nnx.PathContains`), variable types and
`...`.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Auto))


def sharding(*names):
    return NamedSharding(mesh, P(*names))


by_path = nnx.StateSharding(
    {
        nnx.PathContains("kernel"): sharding("a", "b"),
        nnx.PathContains("bias"): sharding("b"),
    }
)
model = nnx.Linear(16, 32, rngs=nnx.Rngs(0))


@nnx.jit(in_shardings=(by_path,))
def constrain(m):
    pass


constrain(model)  # expect: model


template = nnx.Linear(8, 16, rngs=nnx.Rngs(1))
made_prefix = nnx.prefix(template, {nnx.PathContains("kernel"): sharding(None, "b"), ...: sharding()})


@nnx.jit(out_shardings=made_prefix, graph=True, graph_updates=False)
def make():
    return nnx.Linear(8, 16, rngs=nnx.Rngs(2))


made = make()  # expect: made


norm = nnx.BatchNorm(8, rngs=nnx.Rngs(3))
by_type = nnx.StateSharding({nnx.BatchStat: sharding("b"), nnx.Param: sharding("a")})


@nnx.jit(in_shardings=(by_type,))
def touch(n):
    pass


touch(norm)  # expect: norm


whole = nnx.Linear(4, 8, rngs=nnx.Rngs(4))
apply_whole = nnx.jit(lambda m, x: m(x), in_shardings=(sharding(), sharding("a")))
x = jnp.ones((8, 4))
y = apply_whole(whole, x)


specs = nnx.State({"kernel": P(None, "b"), "bias": P()})
layer = nnx.Linear(16, 32, rngs=nnx.Rngs(5))


@nnx.shard_map(mesh=mesh, in_specs=(nnx.StateSharding(specs),), out_specs=P(), graph=True, graph_updates=True)
def per_device(m):
    return jnp.zeros(())


per_device(layer)  # expect: layer


bias = nnx.Param(jnp.ones((8, 4)))


def add_bias(b, inputs):
    return b[...] + inputs


add_jit = nnx.jit_partial(
    add_bias,
    bias,
    in_shardings=(sharding("a"), sharding(None, "b")),
    out_shardings=sharding("a", "b"),
    graph_updates=False,
)
summed = add_jit(jnp.ones((8, 4)))  # expect: summed


replicated_layer = nnx.Linear(4, 2, rngs=nnx.Rngs(6))


@nnx.shard_map(mesh=mesh, in_specs=(P(), P("a")), out_specs=P("a"))
def apply_block(m, xb):
    return xb @ m.kernel[...]


applied = apply_block(replicated_layer, jnp.ones((8, 4)))  # expect: applied
