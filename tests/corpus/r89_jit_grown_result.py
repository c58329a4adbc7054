"""Real code (maxtext `examples/shardings.py` and `tests/unit/sharding_test.py`): a jitted
`gen_layers` grows a list of parameter dicts in a loop, `layers.append(gen_layer(sub_key))` once
per layer, and returns `tuple(layers)`; one NamedSharding is the out_shardings prefix of the
whole tuple.

The result of a jitted function was read from its `return` alone, which knows no list grown in a
loop: each output had no shape. A call of the function runs such a body in order, one pass per
item of a loop over a known sequence; the jitted body is now run the same way, so every leaf of
the result gets its layout at the call (`w0, w1, w2 = ...`: without the run, no shape).
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tensor"), axis_types=(AxisType.Auto, AxisType.Auto))
NUM_LAYERS = 3
D_EMB = 8
D_FF = 4 * D_EMB


def gen_layer(random_key):
    keys = jax.random.split(random_key, num=2)
    return {
        "EMB2FF": jax.random.normal(keys[0], (D_FF, D_EMB), dtype=jnp.bfloat16),
        "FF2EMB": jax.random.normal(keys[1], (D_FF, D_EMB), dtype=jnp.bfloat16),
    }


def gen_layers(random_key):
    layers = []
    for _ in range(NUM_LAYERS):
        random_key, sub_key = jax.random.split(random_key)
        layers.append(gen_layer(sub_key))
    return tuple(layers)


def gen_kernels(random_key):
    kernels = []
    for _ in range(NUM_LAYERS):
        random_key, sub_key = jax.random.split(random_key)
        kernels.append(jax.random.normal(sub_key, (D_FF, D_EMB)))
    return tuple(kernels)


parameter_sharding = NamedSharding(mesh, P("tensor", "fsdp"))
jit_gen_layers = jax.jit(gen_layers, in_shardings=None, out_shardings=parameter_sharding)
presharded_layers = jit_gen_layers(jax.random.key(0))
last_emb2ff = presharded_layers[2]["EMB2FF"]
first_ff2emb = jax.device_put(presharded_layers[0]["FF2EMB"], NamedSharding(mesh, P("fsdp", "tensor")))  # expect: first_ff2emb
resharded = jax.device_put(last_emb2ff, NamedSharding(mesh, P(None, "tensor")))  # expect: resharded
w0, w1, w2 = jax.jit(gen_kernels, out_shardings=parameter_sharding)(jax.random.key(1))  # expect: w0, w1, w2
