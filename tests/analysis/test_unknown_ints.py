"""Ints whose value is not known (`UnknownInt`): `len(...)`, `int(...)` and arithmetic on them.
As a shape they are one dimension (maxtext multihost_dataloading.py:
`jnp.zeros((len(self.cpu_devices)))` is a vector), named after the expression."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
"""


def _names(shape: object) -> list[str] | None:
    return None if shape is None else [str(getattr(d, "name", d)) for d in shape]  # type: ignore[attr-defined]


def test_a_length_is_one_dimension_named_after_it() -> None:
    analysis = analyze(
        HEADER
        + """
class RemoteIteratorWrapper:
    def __init__(self, devices, n):
        self.cpu_devices = devices
        self.dummy_array = jnp.zeros((len(self.cpu_devices)))
        self.dummy_array = jax.device_put(self.dummy_array, NamedSharding(mesh, P("data")))
        a = jax.device_put(jnp.ones(len(devices) * 2 + 1), NamedSharding(mesh, P()))
        b = jax.device_put(jnp.ones((int(n), 4)), NamedSharding(mesh, P(None, "model")))
"""
    )
    dummy = site_named(analysis, "dummy_array")
    assert _names(dummy.shape) == ["len(self.cpu_devices)"]
    assert _names(dummy.shard_shape) == ["len(self.cpu_devices)/2"]
    assert len(site_named(analysis, "a").shape or ()) == 1
    assert _names(site_named(analysis, "b").shard_shape) == ["int(n)", "1"]
    assert not analysis.diagnostics


def test_an_unknown_value_that_may_be_a_tuple_gives_no_rank() -> None:
    """`jnp.zeros(n)` with `n` unknown: `n` may be a shape tuple."""
    analysis = analyze(
        HEADER
        + """
def f(n, xs):
    a = jax.device_put(jnp.zeros(n), NamedSharding(mesh, P()))
    b = jax.device_put(jnp.zeros(n + 1), NamedSharding(mesh, P()))
    c = jax.device_put(jnp.zeros(len(xs) / 2), NamedSharding(mesh, P()))
    return a
"""
    )
    assert [s.shape for s in analysis.sites] == [None, None, None]


def test_the_process_index_is_an_int_that_scales_an_array_as_it_is() -> None:
    """maxtext examples/non_spmd.py: `idx * jnp.ones((idx + 1))` with `idx = jax.process_index()`."""
    analysis = analyze(
        HEADER
        + """
idx = jax.process_index()

def example_step():
    return idx * jnp.ones((idx + 1))

out = jax.jit(example_step, out_shardings=NamedSharding(mesh, P(None)))()
"""
    )
    site = next(s for s in analysis.sites if s.kind.value == "jit_out_sharding")
    assert site.shape is not None and len(site.shape) == 1
    assert site.layout is not None


def test_a_list_of_ints_not_known_is_a_vector_of_its_length() -> None:
    """maxtext tests/assets/.../generate_grpo_golden_logits.py: `jnp.array([len(prompt_tokens)] * 4)`."""
    analysis = analyze(
        HEADER
        + """
def lengths(prompt_tokens):
    true_length = jax.device_put(jnp.array([len(prompt_tokens)] * 4), NamedSharding(mesh, P("data")))
    return true_length
"""
    )
    site = site_named(analysis, "true_length")
    assert site.shard_shape == (2,)
    assert site.dtype is not None and site.dtype.name == "int32"
