"""r59: EasyLM's keys and metrics (issue #12: 1 of EasyLM's 32 sites was resolved).

EasyLM/jax_utils.py keeps a `JaxRNG` in a module-level name that only `init_rng` binds (`global
jax_utils_rng`), and `next_rng()` splits a key off it; the training step's metrics are means over
every axis of arrays whose shapes come from the data. `pjit` places both replicated (`PS()`):
a key is a pair of uint32 words, a mean over every axis one number, whatever the shapes.
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


class JaxRNG:
    @classmethod
    def from_seed(cls, seed):
        return cls(jax.random.PRNGKey(seed))

    def __init__(self, rng):
        self.rng = rng

    def __call__(self):
        self.rng, split_rng = jax.random.split(self.rng)
        return split_rng


def init_rng(seed):
    global jax_utils_rng
    jax_utils_rng = JaxRNG.from_seed(seed)


def next_rng():
    return jax_utils_rng()


def loss_and_accuracy(logits, tokens):
    loss = jnp.mean(jnp.sum(logits, axis=-1))
    accuracy = jnp.mean(jnp.argmax(logits, axis=-1) == tokens)
    return loss, accuracy


mesh = jax.make_mesh((8,), ("dp",))
replicated = NamedSharding(mesh, P())
init_rng(0)
key = jax.device_put(next_rng(), replicated)  # expect: key
k1, k2 = jax.random.split(key)
second = jax.device_put(k2, replicated)  # expect: second


def report(logits, tokens):
    loss, accuracy = loss_and_accuracy(logits, tokens)
    metric = jax.device_put(loss, replicated)  # expect: metric
    return metric, accuracy


report(jnp.ones((4, 16, 32)), jnp.zeros((4, 16), jnp.int32))
