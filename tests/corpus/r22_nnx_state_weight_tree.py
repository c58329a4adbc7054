"""maxtext's DeepSeek batch-split schedule (models/deepseek.py, deepseek_batchsplit.py): a layer
takes its own parameters as a tree, `fetch_weights(nnx.to_pure_dict(nnx.state(self, nnx.Param),
extract_fn), dtype)`, reads each leaf with `jnp.asarray(getattr(x, "value", x)[...], dtype)` in
a `jax.tree.map` whose `is_leaf` stops at anything that is not a Sequence, and all-gathers the
FSDP-sharded weights in a `jax.shard_map` over that tree. The tree is keyed as Flax keys it
(attribute names, `nnx.List` items by index; the Dropout holds no parameter and is not in it),
its leaves have the ranks the code that creates them writes, and `nnx.get_partition_spec`,
`nnx.get_named_sharding` and `nnx.split` give the annotations and the whole state.
"""

import dataclasses
from collections.abc import Sequence

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "fsdp"), axis_types=(AxisType.Auto, AxisType.Auto))


@dataclasses.dataclass(frozen=True)
class Config:
    emb_dim: int = 16
    q_lora_rank: int = 8
    num_heads: int = 4
    head_dim: int = 8
    mlp_dim: int = 32


class RMSNorm(nnx.Module):
    def __init__(self, num_features, rngs):
        self.scale = nnx.Param(nnx.initializers.ones(rngs.params(), (num_features,), jnp.float32))


class Attention(nnx.Module):
    def __init__(self, cfg, rngs):
        self.wq_a = nnx.Linear(cfg.emb_dim, cfg.q_lora_rank, use_bias=False, rngs=rngs)
        self.q_norm = RMSNorm(cfg.q_lora_rank, rngs)
        self.wq_b = nnx.LinearGeneral(
            cfg.q_lora_rank, (cfg.num_heads, cfg.head_dim), use_bias=False, rngs=rngs
        )
        self.out = nnx.Param(
            nnx.initializers.lecun_normal()(rngs.params(), (cfg.num_heads, cfg.head_dim, cfg.emb_dim)),
            out_sharding=(None, None, "fsdp"),
        )


class MoELayer(nnx.Module):
    def __init__(self, cfg, mesh, rngs):
        self.config = cfg
        self.mesh = mesh
        self.pre_norm = RMSNorm(cfg.emb_dim, rngs)
        self.attention = Attention(cfg, rngs)
        self.experts = nnx.List([nnx.Linear(cfg.emb_dim, cfg.mlp_dim, rngs=rngs) for _ in range(2)])
        self.dropout = nnx.Dropout(0.1, rngs=rngs)

    def __call__(self, x):
        def extract_fn(v):
            if isinstance(v, nnx.variablelib.Variable):
                return v.value
            return v

        weights = fetch_weights(nnx.to_pure_dict(nnx.state(self, nnx.Param), extract_fn), jnp.float32)
        weights = gather_weights(weights, self.mesh)
        return x


def fetch_weights(params, dtype):
    return jax.tree.map(
        lambda x: jnp.asarray(getattr(x, "value", x)[...], dtype),
        (
            params["pre_norm"]["scale"],
            (
                params["attention"]["wq_a"]["kernel"],
                params["attention"]["wq_b"]["kernel"],
                params["attention"]["q_norm"]["scale"],
                params["attention"]["out"],
            ),
        ),
        is_leaf=lambda x: not isinstance(x, Sequence),
    )


def gather_weights(weights, mesh):
    def fn(weights):
        norm, (wq_a, wq_b, q_norm, out) = weights
        wq_a = jax.lax.all_gather(wq_a, axis_name="fsdp", tiled=True)
        out = jax.lax.all_gather(out, axis_name="fsdp", tiled=True, axis=2)
        return norm, (wq_a, wq_b, q_norm, out)

    return jax.shard_map(
        fn,
        mesh=mesh,
        in_specs=((P(None), (P("fsdp", None), P("fsdp", None, None), P(None), P(None, None, "fsdp"))),),
        out_specs=(P(None), (P(None, None), P("fsdp", None, None), P(None), P(None, None, None))),
        check_vma=False,
    )(weights)


with jax.set_mesh(mesh):
    model = MoELayer(Config(), mesh, nnx.Rngs(0))
state = nnx.state(model, nnx.Param)
weights = fetch_weights(nnx.to_pure_dict(state), jnp.float32)
norm = jax.device_put(weights[0], NamedSharding(mesh, P("fsdp")))  # expect: norm
wq_b = jax.device_put(weights[1][1], NamedSharding(mesh, P("fsdp", "data")))  # expect: wq_b
gathered = gather_weights(weights, mesh)
specs = nnx.get_partition_spec(state)
out_kernel = jax.device_put(
    state["attention"]["out"][...], NamedSharding(mesh, specs["attention"]["out"].value)
)  # expect: out_kernel
shardings = nnx.get_named_sharding(state, mesh)
expert = jax.device_put(
    state["experts"][1]["kernel"].value, shardings["experts"][1]["kernel"].value
)  # expect: expert
graphdef, everything = nnx.split(model)
bias = jax.device_put(
    everything["experts"][0]["bias"].get_value(), NamedSharding(mesh, P("fsdp"))
)  # expect: bias
y = model(jnp.ones((8, 16)))
