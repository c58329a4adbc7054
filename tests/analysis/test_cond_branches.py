"""`jax.lax.cond` / `jax.lax.switch`: a branch function's body runs with the operands bound, and
the call's value is what a branch gives whose value is known (JAX requires every branch to
return the same types). tests/corpus/r88_lax_cond_branches.py runs the gemma4 pattern under JAX."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
from functools import partial
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))
"""


def test_a_branch_body_sees_the_operands_and_the_call_site() -> None:
    analysis = analyze(
        HEADER
        + """
def top(logits, temp):
    def scaled_branch(logits):
        scaled = jax.device_put(logits / temp, NamedSharding(mesh, P("x", None, "y")))
        return jnp.argmax(scaled, -1)
    return jax.lax.cond(temp > 0, scaled_branch, partial(jnp.argmax, axis=-1), logits)

tokens = jax.device_put(top(jnp.ones((8, 4, 32)), 0.5), NamedSharding(mesh, P("x")))
"""
    )
    scaled = site_named(analysis, "scaled")
    assert scaled.shape == (8, 4, 32)
    assert scaled.shard_shape == (4, 4, 8)
    assert any("jax.lax.cond(..., scaled_branch, ...) at line" in a for a in scaled.assumptions)
    assert site_named(analysis, "tokens").shape == (8, 4)
    assert not analysis.diagnostics


def test_the_value_is_a_known_branchs_when_another_is_not_known() -> None:
    """A lambda returning its operand is the operand; a branch that divides by a value of unknown
    rank has no rank, and the other branch's stands; with no branch of known rank, none."""
    analysis = analyze(
        HEADER
        + """
def pick(x, scale):
    return jax.lax.cond(scale.flag, lambda v: v, lambda v: v / scale.value, x)

def keep(x, scale):
    return jax.lax.cond(scale.flag, lambda v: v / scale.value, partial(jnp.sum, axis=0), x)

def neither(x, scale):
    return jax.lax.cond(scale.flag, lambda v: v / scale.value, lambda v: v * scale.value, x)

def pair(x, y, scale):
    return jax.lax.cond(scale.flag, lambda *args: args, lambda *args: tuple(a * 2 for a in args), x, y)

a = jax.device_put(pick(jnp.ones((8, 4)), object()), NamedSharding(mesh, P("x")))
b = jax.device_put(keep(jnp.ones((8, 4)), object()), NamedSharding(mesh, P("y")))
c = jax.device_put(neither(jnp.ones((8, 4)), object()), NamedSharding(mesh, P("y")))
first, second = pair(jnp.ones((8, 4)), jnp.ones((16,)), object())
d = jax.device_put(second, NamedSharding(mesh, P("y")))
"""
    )
    assert site_named(analysis, "a").shape == (8, 4)
    assert site_named(analysis, "b").shape == (4,)
    assert site_named(analysis, "c").shape is None
    assert site_named(analysis, "d").shape == (16,)


def test_switch_binds_the_operands_of_every_listed_branch() -> None:
    """`second` is also called directly: its body is walked for that call too."""
    analysis = analyze(
        HEADER
        + """
def first(v):
    one = jax.device_put(v, NamedSharding(mesh, P("x")))
    return one

def second(v):
    two = jax.device_put(v * 2, NamedSharding(mesh, P(None, "y")))
    return two

def run(index):
    return jax.lax.switch(index, [first, second], jnp.ones((8, 16)))

direct = second(jnp.ones((4, 8)))

out = jax.device_put(run(1), NamedSharding(mesh, P("x", "y")))
"""
    )
    assert site_named(analysis, "one").shard_shape == (4, 16)
    assert sorted(s.shard_shape for s in analysis.sites if s.name == "two") == [(4, 2), (8, 4)]
    assert site_named(analysis, "out").shard_shape == (4, 4)


def test_a_function_passed_as_the_predicate_or_an_operand_is_no_branch() -> None:
    analysis = analyze(
        HEADER
        + """
def helper(v):
    inner = jax.device_put(v, NamedSharding(mesh, P("x")))
    return inner

def run(flag):
    return jax.lax.cond(flag, lambda f: 1, lambda f: 2, helper)
"""
    )
    assert site_named(analysis, "inner").shape is None


def test_a_nested_branch_is_found_in_its_enclosing_functions_blocks() -> None:
    """nemotron3's `shift_right`, handed to `lax.cond` under an `if` in a `with` block: the call
    is read in the enclosing function's statements, at its own statement."""
    analysis = analyze(
        HEADER
        + """
def block(x, padding):
    with jax.named_scope("roll"):
        if x.shape[1] > 1:
            def shift_right(x):
                rolled = jax.device_put(jnp.roll(x, 1, axis=1), NamedSharding(mesh, P("x")))
                return rolled
            x = jax.lax.cond(padding > 0, shift_right, lambda x: x, x)
    return x

out = block(jnp.ones((8, 4)), 2)
"""
    )
    rolled = site_named(analysis, "rolled")
    assert rolled.shard_shape == (4, 4)
    assert any("jax.lax.cond(..., shift_right, ...) " in a for a in rolled.assumptions), rolled.assumptions
