"""Functions reached only through `jax.grad`/`jax.value_and_grad`/`jax.checkpoint` run with the
arguments the transformed function is called with (maxtext ulysses_collective_test.py, training
loops' `grad_fn = jax.value_and_grad(loss_fn)`), and those transforms return what JAX returns."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
import jax, jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
"""


def test_a_loss_differentiated_at_once_gets_the_arguments_shapes() -> None:
    analysis = analyze(
        HEADER
        + """
def loss(w, x):
    h = jax.lax.with_sharding_constraint(x @ w, NamedSharding(mesh, P("data", "model")))
    return jnp.sum(h)

dw, dx = jax.grad(loss, argnums=(0, 1))(jnp.ones((16, 32)), jnp.ones((8, 16)))
"""
    )
    site = site_named(analysis, "h")
    assert site.shard_shape == (4, 8)
    assert any("jax.grad(loss)(...) at line" in a for a in site.assumptions)
    assert not analysis.diagnostics


def test_a_grad_function_assigned_then_called_and_its_result() -> None:
    analysis = analyze(
        HEADER
        + """
def loss_fn(params, x):
    h = jax.lax.with_sharding_constraint(x @ params["w"], NamedSharding(mesh, P("data", None)))
    return jnp.mean(h), h

grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
(value, hidden), grads = grad_fn({"w": jnp.ones((16, 32))}, jnp.ones((8, 16)))
placed = jax.device_put(grads["w"], NamedSharding(mesh, P("model", "data")))
aux = jax.device_put(hidden, NamedSharding(mesh, P(None, "model")))
"""
    )
    assert site_named(analysis, "h").shard_shape == (4, 32)
    assert site_named(analysis, "placed").shard_shape == (4, 16)
    assert site_named(analysis, "aux").shard_shape == (8, 8)


def test_checkpoint_returns_what_the_function_returns_and_runs_its_body() -> None:
    analysis = analyze(
        HEADER
        + """
def block(x):
    y = jax.lax.with_sharding_constraint(jnp.tanh(x), NamedSharding(mesh, P(None, "model")))
    return y * 2

out = jax.device_put(jax.checkpoint(block)(jnp.ones((4, 8))), NamedSharding(mesh, P("data")))
"""
    )
    assert site_named(analysis, "y").shard_shape == (4, 2)
    assert site_named(analysis, "out").shard_shape == (2, 8)


def test_a_gradient_of_an_integer_argument_and_an_unread_argnums_stay_unknown() -> None:
    analysis = analyze(
        HEADER
        + """
def f(x):
    return jnp.sum(x)

def g(x, n):
    return jnp.sum(x)

gi = jax.device_put(jax.grad(f)(jnp.arange(8)), NamedSharding(mesh, P("data")))
gn = jax.device_put(jax.grad(g, argnums=n)(jnp.ones((8,)), 1), NamedSharding(mesh, P("data")))
"""
    )
    assert site_named(analysis, "gi").shape is None
    assert site_named(analysis, "gn").shape is None


def test_a_function_only_named_in_grad_of_another_function_is_not_bound_to_its_calls() -> None:
    analysis = analyze(
        HEADER
        + """
def loss(x):
    h = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", "model")))
    return jnp.sum(h)

def other(x):
    return jnp.sum(x)

dx = jax.grad(other)(jnp.ones((8, 16)))
"""
    )
    assert site_named(analysis, "h").shape is None
    assert not analysis.diagnostics
