"""jax-llm-examples' MoE routers (llama4, deepseek_r1, gemma4, qwen3, gpt_oss, nemotron3 `model.py`)
tell quantized weights from plain arrays with `is_type = lambda x, cls: (type(x).__name__ ==
cls.__name__) and (type(x).__module__ == cls.__module__)`, and every placement helper (`psc`,
`lsc`) branches on it: a `QuantArray` gets its `.quant` placed, an array itself. An array's type
lives in JAX's modules, never in the program's, so for an array the test is false and the helper
places the array; the router binds the mesh with `lsc = partial(logical_sharding_constraint,
mesh=cfg.mesh, rules=cfg.rules)` (deepseek_r1, kimi_k2), a partial of a function of the
program, called like it. The router picks experts with `jax.lax.top_k(scores, k)`: values and int32
indices, the operand's shape with `k` last; the indices, reshaped to (batch, sequence, k),
enter the experts' `shard_map`.
"""

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))

is_type = lambda x, cls: (type(x).__name__ == cls.__name__) and (type(x).__module__ == cls.__module__)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class QuantArray:
    quant: jax.Array
    scale: jax.Array


def logical_constraint(x, spec, mesh):
    """Place an array, or a quantized array's values."""
    if is_type(x, QuantArray):
        return dataclasses.replace(x, quant=jax.device_put(x.quant, NamedSharding(mesh, spec)))
    return jax.device_put(x, NamedSharding(mesh, spec))


psc = lambda z, spec: (
    logical_constraint(z, spec, mesh)
    if is_type(z, QuantArray)
    else jax.device_put(z, NamedSharding(mesh, spec))
)


def route(x: jax.Array, weight: jax.Array, k: int):
    lsc = partial(logical_constraint, mesh=mesh)
    x_shape = x.shape
    x = x.reshape((-1, x.shape[-1]))
    scores = jax.nn.sigmoid(jnp.einsum("Sk,kj->Sj", x, weight))
    topk_weights, topk_idx = jax.lax.top_k(scores, k)
    topk_idx = lsc(topk_idx, P(None, None)).reshape(x_shape[:-1] + (k,))
    return topk_weights, topk_idx


@partial(
    jax.shard_map, mesh=mesh, in_specs=(P("x", None, None), P("x", None, None)), out_specs=P("x", None, None)
)
def experts(tokens, chosen):
    return tokens[..., :2] * chosen.astype(tokens.dtype)  # expect: tokens, chosen


tokens = jnp.ones((4, 8, 16))
weights, chosen = route(tokens, jnp.ones((16, 8)), 2)
routed = psc(chosen, P("x", "y", None))  # expect: routed
mixed = experts(tokens, chosen)  # expect: mixed
