"""Real code (EasyLM jax_utils.py, models/llama/llama_model.py): a `(regex, PartitionSpec)` rule
table, ordered so that the first rule whose `re.search` finds the parameter's path wins, is
matched against the paths of the parameter tree of `jax.eval_shape(model.init, ...)` by a
`named_tree_map` over `jax.tree_util.tree_map_with_path` whose paths a helper joins with '/'.
`attention/(wq|wk)/kernel` takes `wq` and `wk` but not `wo`, the catch-all `.*` replicates the
rest (the head, the norm), and a scalar-like leaf takes `PS()` before any rule is tried. A second
table that shards the head's bias, whose 6 entries 4 devices do not divide, is rejected where it
is placed. The t5x/big_vision spelling of the same idea, `flatten_dict(params, sep='/')` and a
compiled pattern's `fullmatch`, decides the other kernels.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn
from flax import traverse_util
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as PS

mesh = jax.make_mesh((2, 4), ("fsdp", "mp"))


def tree_path_to_string(path, sep=None):
    keys = []
    for key in path:
        if isinstance(key, jax.tree_util.SequenceKey):
            keys.append(str(key.idx))
        elif isinstance(key, jax.tree_util.DictKey):
            keys.append(str(key.key))
        elif isinstance(key, jax.tree_util.GetAttrKey):
            keys.append(str(key.name))
        else:
            keys.append(str(key))
    if sep is None:
        return tuple(keys)
    return sep.join(keys)


def named_tree_map(f, tree, *rest, is_leaf=None, sep=None):
    return jax.tree_util.tree_map_with_path(
        lambda path, x, *r: f(tree_path_to_string(path, sep=sep), x, *r), tree, *rest, is_leaf=is_leaf
    )


def match_partition_rules(rules, params):
    def get_partition_spec(name, leaf):
        if len(leaf.shape) == 0 or np.prod(leaf.shape) == 1:
            return PS()
        for rule, ps in rules:
            if re.search(rule, name) is not None:
                return ps
        raise ValueError(f"Partition rule not found for param: {name}")

    return named_tree_map(get_partition_spec, params, sep="/")


class LLaMAConfigurator:
    @staticmethod
    def get_partition_rules(shard_head_bias=False):
        head_bias = PS("mp") if shard_head_bias else PS(None)
        return (
            ("transformer/wte/embedding", PS("mp", "fsdp")),
            ("attention/(wq|wk)/kernel", PS("fsdp", "mp")),
            ("attention/wo/kernel", PS("mp", "fsdp")),
            ("attention_norm/scale", PS(None)),
            ("lm_head/bias", head_bias),
            (".*", PS(None)),
        )


class Attention(nn.Module):
    @nn.compact
    def __call__(self, x):
        q = nn.Dense(32, use_bias=False, name="wq")(x)
        k = nn.Dense(32, use_bias=False, name="wk")(x)
        return nn.Dense(16, use_bias=False, name="wo")(q * k)


class Transformer(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(64, 16, name="wte")(tokens)
        x = Attention(name="attention")(x)
        x = nn.LayerNorm(name="attention_norm")(x)
        return nn.Dense(6, name="lm_head")(x)


class LLaMA(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        return Transformer(name="transformer")(tokens)


model = LLaMA()
tokens = jnp.zeros((8, 4), jnp.int32)
shapes = jax.eval_shape(model.init, jax.random.key(0), tokens)
partition = match_partition_rules(LLaMAConfigurator.get_partition_rules(), shapes)
params = model.init(jax.random.key(0), tokens)["params"]["transformer"]
specs = partition["params"]["transformer"]

wte = jax.device_put(params["wte"]["embedding"], NamedSharding(mesh, specs["wte"]["embedding"]))  # expect: wte
wq = jax.device_put(params["attention"]["wq"]["kernel"], NamedSharding(mesh, specs["attention"]["wq"]["kernel"]))  # expect: wq
wk = jax.device_put(params["attention"]["wk"]["kernel"], NamedSharding(mesh, specs["attention"]["wk"]["kernel"]))  # expect: wk
wo = jax.device_put(params["attention"]["wo"]["kernel"], NamedSharding(mesh, specs["attention"]["wo"]["kernel"]))  # expect: wo
norm = jax.device_put(params["attention_norm"]["scale"], NamedSharding(mesh, specs["attention_norm"]["scale"]))  # expect: norm
head = jax.device_put(params["lm_head"]["kernel"], NamedSharding(mesh, specs["lm_head"]["kernel"]))  # expect: head
head_bias = jax.device_put(params["lm_head"]["bias"], NamedSharding(mesh, specs["lm_head"]["bias"]))  # expect: head_bias

sharded_bias = match_partition_rules(LLaMAConfigurator.get_partition_rules(shard_head_bias=True), shapes)
bad_bias = jax.device_put(params["lm_head"]["bias"], NamedSharding(mesh, sharded_bias["params"]["transformer"]["lm_head"]["bias"]))  # expect-error: SH001

KERNEL_RULES = [(re.compile(r"params/transformer/attention/w[qk]/kernel"), PS(None, "mp")), (re.compile(r".*/kernel"), PS("fsdp"))]


def spec_of_path(path):
    for pattern, spec in KERNEL_RULES:
        if pattern.fullmatch(path):
            return spec
    return PS()


flat = traverse_util.flatten_dict(shapes, sep="/")
flat_specs = {path: spec_of_path(path) for path in flat}
wq_flat = jax.device_put(params["attention"]["wq"]["kernel"], NamedSharding(mesh, flat_specs["params/transformer/attention/wq/kernel"]))  # expect: wq_flat
wo_flat = jax.device_put(params["attention"]["wo"]["kernel"], NamedSharding(mesh, flat_specs["params/transformer/attention/wo/kernel"]))  # expect: wo_flat
