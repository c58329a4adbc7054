"""A module that sets a mesh per section (JAX's shard_map tutorial): which mesh code meets, and
how certain that is. tests/corpus/r19 runs the same patterns under JAX."""

from __future__ import annotations

from analysis_helpers import analyze

from shardls.core import Severity

SECTIONS = """\
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("i", "j"))
jax.set_mesh(mesh)

def device_put(x, pspec):
    return jax.device_put(x, NamedSharding(mesh, pspec))

x = device_put(jnp.zeros((8, 4)), P("i", None))

mesh = Mesh(jax.devices()[:2], ("stages",))

@jax.shard_map(in_specs=P("stages"), out_specs=P())
def loss(batch):
    return jax.lax.pmean(batch.sum(), "stages")

jax.set_mesh(mesh)
total = jax.jit(loss)(jnp.zeros((8,)))
"""


def test_a_global_rebound_below_is_read_as_bound_when_the_function_is_called() -> None:
    """`device_put` reads `mesh` when it is called, at line 11: the (i, j) mesh bound above the
    call, not the `stages` mesh bound below it (jax's shard_map notebook; corpus r53)."""
    analysis = analyze(SECTIONS)
    assert not [d for d in analysis.diagnostics if d.span.line == 8]
    (site,) = [s for s in analysis.sites if s.span.line == 8]
    assert site.mesh is not None and dict(site.mesh.mesh.sizes_by_name) == {"i": 4, "j": 2}
    assert site.shard_shape == (2, 4)


def test_a_global_rebound_read_by_a_call_of_unknown_time_gives_a_warning_that_names_it() -> None:
    """Called only from a function nobody calls here, `device_put` may run at any time: shardls
    takes the last binding, so what it finds there is at most a warning that says why."""
    deferred = SECTIONS.replace("x = device_put(", "def later():\n    return device_put(")
    found = [d for d in analyze(deferred).diagnostics if d.span.line == 8]
    assert found and all(d.severity is Severity.WARNING for d in found)
    assert all("`mesh` as last bound in the module" in d.message for d in found)


def test_a_decorator_without_mesh_is_not_checked_against_the_mesh_where_it_is_defined() -> None:
    """The `@jax.shard_map` meets the mesh current where it is called (`stages`, set below), not
    the (i, j) mesh current where it is defined."""
    analysis = analyze(SECTIONS)
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert not [d for d in analysis.diagnostics if d.span.line == 14]
