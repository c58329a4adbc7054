"""r67: EasyLM's train state laid out by its rule table (llama_train.py:141, jax_utils.py:367).

`jax.eval_shape(init_fn, rng)` of a `TrainState.create(params=model.init(...), tx=optax.adamw(...))`
is matched against `(regex, PartitionSpec)` rules by `match_partition_rules` (a
`tree_map_with_path` whose paths are joined with '/': `params/params/wq/kernel`; the first rule
that matches wins), which gives a `TrainState` of specs; `jax.jit(...,
in_shardings=(train_state_partition, PS(), PS()), out_shardings=...)` pairs it with the state
leaf by leaf. Under JAX the step is `P()`, each
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
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as PS


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Dense(16, name="wq")(x)
        return nn.Dense(8, name="w2")(x)


def match_partition_rules(rules, tree):
    """EasyLM's, with its path helper spelled as `keystr` (`params/params/wq/kernel`)."""

    def rule_for(path, leaf):
        name = jax.tree_util.keystr(path, simple=True, separator="/")
        scalar = len(leaf.shape) == 0 or np.prod(leaf.shape) == 1
        matching = [spec for pattern, spec in rules if re.search(pattern, name) is not None]
        return PS() if scalar else matching[0]

    return jax.tree_util.tree_map_with_path(rule_for, tree)


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
kernel_spec = train_state_partition.params["params"]["wq"]["kernel"]
kernel = jax.device_put(
    train_state.params["params"]["wq"]["kernel"], NamedSharding(mesh, kernel_spec)
)  # expect: kernel
assert train_state.params["params"]["wq"]["kernel"].sharding.spec == PS("fsdp", "mp")
assert train_state.params["params"]["wq"]["kernel"].addressable_shards[0].data.shape == (16, 4)
assert train_state.params["params"]["w2"]["kernel"].addressable_shards[0].data.shape == (4, 4)
assert train_state.opt_state[0].mu["params"]["w2"]["kernel"].sharding.spec == PS("mp", "fsdp")
