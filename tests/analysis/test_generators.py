"""Generators (`evaluation/calls.py`, `StreamV`): a loop over a generator's call binds what its
`yield`s give with the call's arguments, as a loop over a list binds the choice of its items;
how many items there are stays unknown. And the numpy calls the data loops of examples use to
sample a batch (`np.random.choice`, `X[idx]`, `np.linspace`)."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import FileAnalysis

HEAD = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))
data = NamedSharding(mesh, P("data"))
"""


def shard(analysis: FileAnalysis, name: str) -> object:
    return site_named(analysis, name).shard_shape


def test_a_loop_over_a_generator_binds_what_it_yields_with_the_call_arguments() -> None:
    """flax examples/nnx_toy_examples/04_data_parallel_with_jit.py."""
    analysis = analyze(
        HEAD + "def dataset(steps, batch_size):\n"
        "    for _ in range(steps):\n"
        "        x = np.random.uniform(-2, 2, size=(batch_size, 1))\n"
        "        y = 0.8 * x**2 + 0.1 + np.random.normal(0, 0.1, size=x.shape)\n"
        "        yield x, y\n"
        "for step, (x, y) in enumerate(dataset(1000, 16)):\n"
        "    xs, ys = jax.device_put((x, y), data)\n"
    )
    assert shard(analysis, "xs") == (2, 1)
    assert shard(analysis, "ys") == (2, 1)
    assert not analysis.diagnostics


def test_several_yields_are_a_choice_and_a_decided_if_keeps_one() -> None:
    analysis = analyze(
        HEAD + "def batches(wide):\n"
        "    if wide:\n"
        "        yield jnp.ones((16, 4))\n"
        "    else:\n"
        "        yield jnp.ones((8, 4))\n"
        "    yield jnp.zeros((16, 4))\n"
        "for b in batches(True):\n"
        "    placed = jax.device_put(b, data)\n"
        "for c in batches(False):\n"
        "    both = jax.device_put(c, data)\n"
    )
    placed = {s.shape for s in analysis.sites if s.name == "placed"}
    both = {s.shape for s in analysis.sites if s.name == "both"}
    assert placed == {(16, 4)}
    assert both == {(8, 4), (16, 4)}


def test_items_a_generator_does_not_show_stay_unknown() -> None:
    """`yield from`, a `yield` inside an expression, and the number of items: never guessed."""
    analysis = analyze(
        HEAD + "def inner():\n"
        "    yield jnp.ones((8, 2))\n"
        "def outer():\n"
        "    yield from inner()\n"
        "def echo():\n"
        "    sent = yield jnp.ones((8, 2))\n"
        "    yield sent\n"
        "for a in outer():\n"
        "    delegated = jax.device_put(a, data)\n"
        "for e in echo():\n"
        "    echoed = jax.device_put(e, data)\n"
        "items = [jax.device_put(v, data) for v in inner()]\n"
        "first, *rest = inner()\n"
    )
    assert site_named(analysis, "delegated").shape is None
    assert {s.shape for s in analysis.sites if s.name == "echoed"} == {None}
    assert not analysis.diagnostics


def test_a_generator_call_is_not_none() -> None:
    """A generator function has no `return`: its call is still a generator, not None."""
    analysis = analyze(
        HEAD + "def gen():\n"
        "    yield jnp.ones((8, 2))\n"
        "g = gen()\n"
        "x = jax.device_put(jnp.ones((8, 2)), data) if g is None else jax.device_put(jnp.ones((16, 2)), data)\n"
    )
    assert {s.shape for s in analysis.sites if s.name == "x"} != {(8, 2)}


def test_a_batch_sampled_by_index_has_the_index_shape_then_the_rest() -> None:
    """flax examples/nnx_toy_examples/10_fsdp_and_optimizer.py: `X[idx]` with
    `idx = np.random.choice(len(X), size=batch_size)`, X from `np.linspace(...)[:, None]`."""
    analysis = analyze(
        HEAD + "X = np.linspace(-2, 2, 100)[:, None]\n"
        "idx = np.random.choice(len(X), size=32)\n"
        "indices = jax.device_put(idx, data)\n"
        "batch = jax.device_put(X[idx], data)\n"
        "mask = X[:, 0] > 0\n"
        "masked = jax.device_put(X[mask], data)\n"
        "picked = jax.device_put(np.random.choice(X[:, 0], size=(8, 2)), data)\n"
    )
    assert site_named(analysis, "indices").shape == (32,)
    dtype = site_named(analysis, "indices").dtype
    assert dtype is not None and dtype.name == "int32"  # numpy's int64, narrowed by JAX
    assert shard(analysis, "batch") == (4, 1)
    assert site_named(analysis, "masked").shape is None  # as many rows as the data selects
    assert shard(analysis, "picked") == (1, 2)
    assert not analysis.diagnostics
