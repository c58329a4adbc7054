"""`jax.ShapeDtypeStruct(shape, dtype, sharding=...)` is checked as JAX 0.10 builds it.

JAX checks the sharding's rank against the shape (`check_compatible_aval`: every extra entry, None
too, raises) and the NamedSharding's own construction, but asks for no shard shape: an uneven
dimension is accepted there and only rejected by the jit, `.lower()` or `device_put` the struct
is given. google-deepmind/simply's `common_test.py` builds `ShapeDtypeStruct((2, 3), sharding=
NamedSharding(Mesh(jax.devices(), 'x'), P('x')))`, which on 8 known devices was an SH001 error.
"""

from __future__ import annotations

from analysis_helpers import analyze, line_of

from shardls.analysis.settings import Settings
from shardls.core import Severity

EIGHT = Settings(device_count=8, device_count_source="--device-count")

SOURCE = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("x",))
uneven = jax.ShapeDtypeStruct((2, 3), jnp.float32, sharding=NamedSharding(mesh, P("x")))
too_long = jax.ShapeDtypeStruct((16, 3), jnp.float32, sharding=NamedSharding(mesh, P("x", None, None)))
balanced = jax.ShapeDtypeStruct((16, 3), jnp.float32, sharding=NamedSharding(mesh, P("x")))
"""


def _found(line: int) -> list[tuple[str, Severity]]:
    analysis = analyze(SOURCE, EIGHT)
    return [(d.code, d.severity) for d in analysis.diagnostics if d.span.line == line]


def test_an_uneven_struct_is_a_warning_even_on_known_devices() -> None:
    line = line_of(SOURCE, "uneven =")
    assert _found(line) == [("SH001", Severity.WARNING)]
    (diagnostic,) = [d for d in analyze(SOURCE, EIGHT).diagnostics if d.span.line == line]
    assert "JAX accepts it in a ShapeDtypeStruct" in diagnostic.message


def test_extra_none_entries_are_an_error_in_a_struct() -> None:
    assert _found(line_of(SOURCE, "too_long =")) == [("SH002", Severity.ERROR)]


def test_an_even_struct_has_its_per_device_shape() -> None:
    analysis = analyze(SOURCE, EIGHT)
    line = line_of(SOURCE, "balanced =")
    assert not _found(line)
    (site,) = [s for s in analysis.sites if s.span.line == line]
    assert site.shard_shape == (2, 3)
