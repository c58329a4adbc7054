"""A choice of tuples unpacked into names (jax-llm-examples `next_logits, cache = forward(...)`,
`forward` returning `(logits, kvs) if ... else (logits, cache)`): each target gets its part of
every option, and the targets of one unpacking are never combined from two options, which no run
assigns together (tests/corpus/r84_unpacked_choice_of_tuples.py runs the first under JAX)."""

from __future__ import annotations

from analysis_helpers import analyze

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
"""


def test_a_part_every_option_gives_is_known() -> None:
    analysis = analyze(
        HEADER
        + """
def forward(tokens, cache):
    logits = jnp.zeros((8, 16))
    return (logits, [logits]) if cache is None or cache.ready else (logits, cache)

def step(cache):
    logits, cache = forward(jnp.zeros((8, 4)), cache)
    return jax.device_put(logits, NamedSharding(mesh, P("x", "y")))
"""
    )
    (site,) = [s for s in analysis.sites if s.kind.value == "device_put"]
    assert site.shape == (8, 16)
    assert site.shard_shape == (4, 4)


def test_the_targets_of_one_unpacking_come_from_one_option() -> None:
    """Mixed, the rank-1 array would meet the rank-2 spec: an SH002 error on code that runs."""
    analysis = analyze(
        HEADER
        + """
def pick(flag):
    return (jnp.zeros((8, 4)), P("x", None)) if flag.ready else (jnp.zeros((8,)), P("y"))

def place(flag):
    array, spec = pick(flag)
    return jax.device_put(array, NamedSharding(mesh, spec))
"""
    )
    shapes = sorted((s.shape, s.shard_shape) for s in analysis.sites if s.kind.value == "device_put")
    assert shapes == [((8,), (2,)), ((8, 4), (4, 4))]
    assert not analysis.diagnostics
