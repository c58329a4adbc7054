"""r67: EasyLM's train state laid out by its rule table (llama_train.py:141, jax_utils.py:367).

`jax.eval_shape(init_fn, rng)` of a `TrainState.create(params=model.init(...), tx=optax.adamw(...))`
is matched against `(regex, PartitionSpec)` rules by `match_partition_rules` (a
`tree_map_with_path` whose paths are joined with '/': `params/params/wq/kernel`), which gives a
`TrainState` of specs; `jax.jit(..., in_shardings=(train_state_partition, PS(), PS()),
out_shardings=...)` pairs it with the state leaf by leaf. Under JAX the step is `P()`, each
kernel takes its rule, and the optimizer's moments (`opt_state[0].mu`, `.nu`) take the same rules
as the params (their paths end the same way); shardls knows the step and the params and leaves
the optimizer's state unknown (tests/analysis/test_train_state.py reads this program).
"""

import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training.train_state import TrainState
from jax.sharding import PartitionSpec as PS


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16, name="wq")(x)
        return nn.Dense(8, name="w2")(x)


def tree_path_to_string(path, sep=None):
    keys = []
    for key in path:
        if isinstance(key, jax.tree_util.SequenceKey):
            keys.append(str(key.idx))
        elif isinstance(key, jax.tree_util.DictKey):
            keys.append(str(key.key))
        elif isinstance(key, jax.tree_util.GetAttrKey):
            keys.append(str(key.name))
        elif isinstance(key, jax.tree_util.FlattenedIndexKey):
            keys.append(str(key.key))
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


RULES = (("wq/kernel", PS("fsdp", "mp")), ("w2/kernel", PS("mp", "fsdp")), (".*", PS(None)))
model = Block()
optimizer = optax.adamw(1e-3)


def init_fn(rng):
    params = model.init(rng, jnp.zeros((4, 32)))
    return TrainState.create(params=params, tx=optimizer, apply_fn=None)


def train_step(train_state, rng, batch):
    return train_state, rng, batch


mesh = jax.make_mesh((2, 4), ("fsdp", "mp"))
train_state_shapes = jax.eval_shape(init_fn, jax.random.PRNGKey(0))
train_state_partition = match_partition_rules(RULES, train_state_shapes)
with jax.set_mesh(mesh):
    sharded_init_fn = jax.jit(init_fn, in_shardings=PS(), out_shardings=train_state_partition)
    train_state = sharded_init_fn(jax.random.PRNGKey(0))
    sharded_train_step = jax.jit(
        train_step,
        in_shardings=(train_state_partition, PS(), PS()),
        out_shardings=(train_state_partition, PS(), PS()),
    )
    train_state, rng, batch = sharded_train_step(train_state, jax.random.PRNGKey(1), jnp.zeros((8, 32)))
assert train_state.params["params"]["wq"]["kernel"].sharding.spec == PS("fsdp", "mp")
assert train_state.params["params"]["wq"]["kernel"].addressable_shards[0].data.shape == (16, 4)
assert train_state.params["params"]["w2"]["kernel"].addressable_shards[0].data.shape == (4, 4)
assert train_state.opt_state[0].mu["params"]["w2"]["kernel"].sharding.spec == PS("mp", "fsdp")
