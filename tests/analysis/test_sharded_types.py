"""Sharding in types in the analyzer: which arrays get a type, where the errors go, and how
certain they are. What each type is, is JAX's to say: tests/core/test_types_in_source.py compares
these with `jax.typeof` on random programs; the cases here pin the analyzer's decisions."""

from __future__ import annotations

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.analysis.sharded.typing_pass import ONE_OF_SEVERAL
from shardls.core import Severity
from tests.analysis.analysis_helpers import analyze, line_of

HEADER = """
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
"""

ISSUE_EXAMPLE = (
    HEADER
    + """
x = jax.device_put(jnp.ones((8, 16)), jax.P("X", "Y"))
w = jax.device_put(jnp.ones((16, 32)), jax.P("Y", None))
y = x @ w
t = x.T
r = x.reshape(4, 2, 16)
"""
)


def typed_at(analysis: FileAnalysis, line: int, kind: SiteKind = SiteKind.ARRAY_TYPE) -> list[Site]:
    return [s for s in (*analysis.sites, *analysis.names) if s.kind is kind and s.span.line == line]


def type_of_name(analysis: FileAnalysis, source: str, name: str) -> str | None:
    """The type a hover on the assignment target `name = ...` shows."""
    line = line_of(source, f"{name} = ")
    sites = [
        s for s in typed_at(analysis, line, SiteKind.ARRAY_NAME) if s.name == name and s.span.column == 0
    ]
    return sites[0].jax_type if sites else None


def test_the_issue_example_types_every_array_and_rejects_the_ambiguous_contraction() -> None:
    analysis = analyze(ISSUE_EXAMPLE)
    (error,) = analysis.diagnostics
    assert (error.code, error.severity) == ("SH301", Severity.ERROR)
    assert error.span.line == line_of(ISSUE_EXAMPLE, "y = x @ w")
    assert (error.span.column, error.span.end_column) == (4, 9)  # the `x @ w`, not the statement
    assert "lhs_contracting_spec=('Y',) and rhs_contracting_spec=('Y',)" in error.message
    assert error.data["jax_error"] == "ShardingTypeError"
    assert type_of_name(analysis, ISSUE_EXAMPLE, "t") == "float32[16@Y,8@X]"
    assert type_of_name(analysis, ISSUE_EXAMPLE, "r") == "float32[4@X,2,16@Y]"
    assert type_of_name(analysis, ISSUE_EXAMPLE, "y") is None  # JAX raises: no type after it
    (transposed,) = typed_at(analysis, line_of(ISSUE_EXAMPLE, "t = x.T"))
    assert transposed.name == "t" and transposed.layout is not None
    assert transposed.shard_shape == (4, 4)
    place = line_of(ISSUE_EXAMPLE, "x = jax")
    assert transposed.type_sources == (
        f"Y: device_put at line {place + 1}",
        f"X: device_put at line {place + 1}",
    )


def test_names_that_read_a_typed_array_answer_a_hover_but_are_no_layouts() -> None:
    analysis = analyze(ISSUE_EXAMPLE)
    assert all(s.kind is not SiteKind.ARRAY_NAME for s in analysis.sites)
    line = line_of(ISSUE_EXAMPLE, "t = x.T")
    names = {(s.name, s.span.column): s.jax_type for s in typed_at(analysis, line, SiteKind.ARRAY_NAME)}
    assert names == {("t", 0): "float32[16@Y,8@X]", ("x", 4): "float32[8@X,16@Y]"}


def test_a_rejection_on_one_of_several_values_is_a_warning() -> None:
    source = (
        HEADER
        + """
def build(flag):
    x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
    if flag:
        w = jax.device_put(jnp.ones((16, 32)), P("Y", None))
    else:
        w = jax.device_put(jnp.ones((16, 32)), P(None, "Y"))
    return x @ w

build(FLAG)
"""
    )
    diagnostics = [d for d in analyze(source).diagnostics if d.code == "SH301"]
    assert diagnostics and all(d.severity is Severity.WARNING for d in diagnostics)
    assert all(ONE_OF_SEVERAL in d.assumptions for d in diagnostics)


def test_a_rejection_on_a_mesh_sized_from_the_assumed_device_count_is_a_warning() -> None:
    source = ISSUE_EXAMPLE.replace("(2, 4)", "(jax.device_count() // 4, 4)")
    (warning,) = analyze(source).diagnostics
    assert (warning.code, warning.severity) == ("SH301", Severity.WARNING)
    assert "8 devices" in warning.message and warning.assumptions


def test_an_unknown_out_sharding_leaves_the_result_untyped_and_unjudged() -> None:
    source = (
        HEADER
        + """
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
w = jax.device_put(jnp.ones((16, 32)), P("Y", None))
y = jnp.matmul(x, w, out_sharding=SPEC)
z = y + 1
"""
    )
    analysis = analyze(source)
    assert not analysis.diagnostics
    assert type_of_name(analysis, source, "y") is None and type_of_name(analysis, source, "z") is None


def test_auto_axes_give_no_type_and_mixed_meshes_say_the_compiler_chooses() -> None:
    auto = ISSUE_EXAMPLE.replace("AxisType.Explicit,) * 2", "AxisType.Auto,) * 2")
    analysis = analyze(auto)
    assert not analysis.diagnostics
    assert not [s for s in (*analysis.sites, *analysis.names) if s.jax_type is not None]
    mixed = (
        HEADER.replace("(AxisType.Explicit,) * 2", "(AxisType.Explicit, AxisType.Auto)")
        + """
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
t = x.T
"""
    )
    analysis = analyze(mixed)
    (site,) = typed_at(analysis, line_of(mixed, "t = x.T"))
    assert site.jax_type == "float32[16,8@X]"
    assert site.compiler_chosen == ("Y",) and site.layout is None


def test_indexing_is_judged_eagerly_at_module_level_and_traced_under_jit() -> None:
    source = (
        HEADER
        + """
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
eager = x[0:4]

@jax.jit
def traced(a):
    return a[0:4]

inside = traced(x)

@some_decorator
def unknown(a):
    return a[0:4]

unclear = unknown(x)
"""
    )
    analysis = analyze(source)
    errors = [(d.code, d.span.line) for d in analysis.diagnostics]
    assert errors == [("SH308", line_of(source, "eager = x[0:4]"))]
    assert type_of_name(analysis, source, "inside") == "float32[4@X,16@Y]"
    assert type_of_name(analysis, source, "unclear") is None


def test_a_placement_from_a_known_layout_says_what_each_device_receives() -> None:
    source = (
        HEADER
        + """
x = jax.device_put(jnp.ones((1024, 1024)), P("X", "Y"))
y = jax.sharding.reshard(x, P(None, "Y"))
"""
    )
    analysis = analyze(source)
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.RESHARD]
    assert site.jax_type == "float32[1024,1024@Y]"
    assert site.movement is not None
    # Each device held a 512x256 block and needs 1024x256: the other half arrives.
    assert set(site.movement.received_bytes) == {512 * 256 * 4}


def test_an_edit_gives_the_same_types_as_a_fresh_analysis() -> None:
    """Types reused from memoised values are replayed, so the per-segment cache cannot lose them."""
    analyzer = Analyzer()
    analyzer.analyze("/virtual/model.py", ISSUE_EXAMPLE)
    edited = ISSUE_EXAMPLE.replace("r = x.reshape(4, 2, 16)", "r = x.reshape(2, 4, 16)")
    again = analyzer.analyze("/virtual/model.py", edited)
    fresh = Analyzer().analyze("/virtual/model.py", edited)
    assert again.sites == fresh.sites
    assert again.names == fresh.names
    assert again.diagnostics == fresh.diagnostics
    assert type_of_name(again, edited, "r") == "float32[2@X,4,16@Y]"


MALFORMED = (
    HEADER
    + """
from jax import lax
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
a = x.transpose(5, 0)
b = x.reshape(-1, -1)
c = x.reshape(0, 7)
d = jnp.einsum('ab,bc->ad', x, x)
e = jnp.einsum('a...b,b->a', x, x)
f = x.sum(axis=(0, 0))
g = x[1:2:0]
h = x[100]
i = jnp.split(x, 0)
j = jnp.split(x, 3)
k = lax.slice(x, (0,), (1,))
l = jnp.moveaxis(x, 3, 0)
m = jnp.concatenate([x, jnp.ones((3,))])
n = jnp.stack([])
o = x.swapaxes(0, 9)
p = jnp.broadcast_to(x, (2,))
q = lax.dot_general(x, x, (((5,), (0,)), ((), ())))
r = x[..., ...]
s = x[None, None, None, 0, 0, 0]
t = jnp.expand_dims(x, 9)
u = x.squeeze(0)
v = jnp.cumsum(x, axis=7)
w = jnp.argmax(x, axis=-9)
y = lax.dynamic_slice(x, (0, 0), (99, 1))
z = jax.nn.softmax(x, axis=5)
"""
)


def test_malformed_operations_cost_their_type_not_the_analysis() -> None:
    """Each line raises in JAX before any sharding rule (a bad axis, a zero step, an empty stack)
    except `x[100]`: eagerly, a static index out of bounds is a gather, and JAX's gather rule
    rejects it first (checked under jax 0.10.2)."""
    analysis = analyze(MALFORMED)
    assert [(d.code, d.span.line) for d in analysis.diagnostics] == [
        ("SH308", line_of(MALFORMED, "h = x[100]"))
    ]
