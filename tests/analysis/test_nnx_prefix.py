"""Flax NNX's lifted transforms lay a module out variable by variable (issue 12, flax
tests/nnx/transforms_test.py): `nnx.jit` / `nnx.jit_partial` / `nnx.shard_map` with one sharding
for a module, an `nnx.StateSharding` or an `nnx.prefix` whose first matching filter decides per
variable. Every layout below is the one Flax 0.12 gives under JAX (r54 in the corpus runs the
same patterns); a filter shardls cannot read leaves its variables without a site, never a guess."""

from __future__ import annotations

from analysis_helpers import analyze, line_of

from shardls.analysis.facts import FileAnalysis, SiteKind

HEADER = """
import jax, jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Auto))
def sharding(*names):
    return NamedSharding(mesh, P(*names))
m = nnx.Linear(16, 32, rngs=nnx.Rngs(0))
"""


def _layouts(analysis: FileAnalysis, kind: SiteKind) -> dict[str, tuple[object, object]]:
    """The layouts of one kind at calls (where the sharding is written, a prefix of a module
    meets no single shape)."""
    return {
        site.name or "": (site.shape, site.shard_shape)
        for site in analysis.sites
        if site.kind is kind and site.shape is not None
    }


def _jitted(sharding: str) -> FileAnalysis:
    return analyze(
        HEADER
        + f"""
@nnx.jit(in_shardings=({sharding},))
def f(model):
    pass
f(m)
"""
    )


def test_state_sharding_by_path() -> None:
    analysis = _jitted(
        'nnx.StateSharding({nnx.PathContains("kernel"): sharding("a", "b"), nnx.PathContains("bias"): sharding("b")})'
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (8, 8)),
        "model.bias": ((32,), (8,)),
    }
    assert not analysis.diagnostics


def test_first_matching_filter_wins() -> None:
    analysis = _jitted(
        'nnx.StateSharding({nnx.PathContains("kernel"): sharding(None, "b"), ...: sharding("a")})'
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (16, 8)),
        "model.bias": ((32,), (16,)),
    }


def test_one_sharding_for_a_whole_module() -> None:
    analysis = _jitted('sharding("b")')
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (4, 32)),
        "model.bias": ((32,), (8,)),
    }


def test_a_predicate_whose_answer_is_not_known_is_not_guessed() -> None:
    """A function as a filter whose body cannot be decided (it calls a function not known here):
    the variables it may select get no sharding, nor do the ones after it (Flax picks the first
    filter that matches)."""
    analysis = _jitted(
        'nnx.StateSharding({(lambda path, v: unknown_rule(path)): sharding("a"), ...: sharding("b")})'
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {}


def test_a_predicate_is_read_from_the_path_and_the_variable() -> None:
    """`lambda path, x: ...` selects by the names in the path or the variable's type, as Flax
    calls it; a lambda bound to a name and a `def` taking both are read the same way."""
    analysis = analyze(
        HEADER
        + """
is_bias = lambda path, x: path[-1] == "bias"
def is_stat(path, x):
    return isinstance(x, nnx.BatchStat)
by = nnx.StateSharding({is_stat: sharding(), (lambda path, x: "kernel" in path): sharding("a", "b"), is_bias: sharding("b")})
@nnx.jit(in_shardings=(by,))
def f(model):
    pass
f(m)
"""
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (8, 8)),
        "model.bias": ((32,), (8,)),
    }
    assert not analysis.diagnostics


def test_a_predicate_a_function_returns_reads_the_call_s_arguments() -> None:
    """flax's `path_ends_with(('linear1', 'kernel'))`: the lambda compares a slice of the path
    with the suffix the call passed."""
    analysis = analyze(
        HEADER
        + """
def path_ends_with(path_suffix):
    return lambda path, value: path[-len(path_suffix) :] == path_suffix
by = nnx.StateSharding({path_ends_with(("bias",)): sharding("b"), path_ends_with(("kernel",)): sharding("a")})
@nnx.jit(in_shardings=(by,))
def f(model):
    pass
f(m)
"""
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (8, 32)),
        "model.bias": ((32,), (8,)),
    }


def test_a_predicate_inside_all_is_read() -> None:
    """tunix: `nnx.All(nnx.Param, lambda path, x: 'output' not in path)`."""
    analysis = _jitted(
        'nnx.StateSharding({nnx.All(nnx.Param, lambda path, x: "bias" not in path): sharding("a"), ...: sharding()})'
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (8, 32)),
        "model.bias": ((32,), (32,)),
    }


def test_param_filter_does_not_decide_other_kinds() -> None:
    """`nnx.Variable` is read as `nnx.Param`: a batch statistic may match it, so is not placed."""
    analysis = analyze(
        HEADER
        + """
norm = nnx.BatchNorm(8, rngs=nnx.Rngs(0))
@nnx.jit(in_shardings=(nnx.StateSharding({nnx.Param: sharding("a"), ...: sharding("b")}),))
def f(n):
    pass
f(norm)
"""
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {"n.scale": ((8,), (4,)), "n.bias": ((8,), (4,))}


def test_prefix_as_out_shardings() -> None:
    analysis = analyze(
        HEADER
        + """
spec = nnx.prefix(m, {nnx.PathContains("kernel"): sharding("a", None), ...: sharding()})
@nnx.jit(out_shardings=spec, graph=True, graph_updates=False)
def make():
    return nnx.Linear(16, 32, rngs=nnx.Rngs(1))
made = make()
"""
    )
    assert _layouts(analysis, SiteKind.JIT_OUT) == {
        "made.kernel": ((16, 32), (8, 32)),
        "made.bias": ((32,), (32,)),
    }


def test_state_of_specs_in_shard_map() -> None:
    analysis = analyze(
        HEADER
        + """
specs = nnx.State({"kernel": P(None, "b"), "bias": P()})
@nnx.shard_map(mesh=mesh, in_specs=(nnx.StateSharding(specs),), out_specs=P())
def f(layer):
    return jnp.zeros(())
f(m)
"""
    )
    assert _layouts(analysis, SiteKind.SHARD_MAP_IN) == {
        "layer.kernel": ((16, 32), (16, 8)),
        "layer.bias": ((32,), (32,)),
    }


def test_jit_partial_shardings_cover_the_bound_arguments_first() -> None:
    analysis = analyze(
        HEADER
        + """
def g(model, x):
    return model(x)
g_jit = nnx.jit_partial(g, m, in_shardings=(sharding(), sharding("a")), graph_updates=False)
y = g_jit(jnp.ones((8, 16)))
"""
    )
    assert _layouts(analysis, SiteKind.JIT_IN) == {
        "model.kernel": ((16, 32), (16, 32)),
        "model.bias": ((32,), (32,)),
        "x": ((8, 16), (4, 16)),
    }


def test_written_sharding_takes_the_one_array_it_meets_beside_modules() -> None:
    """Where an in_sharding is written it shows the array it meets at the calls, even when other
    entries of the tuple lay out modules (one pair per variable at the call)."""
    source = (
        HEADER
        + """
def g(model, x):
    return model(x)
g_jit = nnx.jit(g, in_shardings=(None, NamedSharding(mesh, P("a"))))
y = g_jit(m, jnp.ones((8, 16)))
"""
    )
    analysis = analyze(source)
    line = line_of(source, "g_jit = ")
    written = [s for s in analysis.sites if s.kind is SiteKind.JIT_IN and s.span.line == line]
    assert [(s.name, s.shape, s.shard_shape) for s in written] == [("x", (8, 16), (4, 16))]


def test_constraint_on_a_variable_lays_out_its_array() -> None:
    """`m.kernel = with_sharding_constraint(m.kernel, s)` in an `nnx.jit` body: a variable is a
    pytree around its array (flax transforms_test.py)."""
    analysis = analyze(
        HEADER
        + """
@nnx.jit
def f(model):
    model.kernel = jax.lax.with_sharding_constraint(model.kernel, sharding("b", "a"))
f(m)
"""
    )
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.CONSTRAINT]
    assert (site.shape, site.shard_shape) == ((16, 32), (4, 16))


def test_nnx_eval_shape_is_jax_eval_shape() -> None:
    """Its `graph=` options aside, `nnx.eval_shape(f, *args)` gives what `f(*args)` returns."""
    analysis = analyze(
        HEADER
        + """
def double(x):
    return x * 2
out = nnx.eval_shape(double, jnp.ones((8, 16)), graph=True, graph_updates=False)
z = jax.device_put(jnp.zeros(out.shape), sharding("a"))
"""
    )
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.DEVICE_PUT]
    assert (site.shape, site.shard_shape) == ((8, 16), (4, 16))


def _shard_mapped(module_spec: str) -> FileAnalysis:
    return analyze(
        HEADER
        + f"""
@nnx.shard_map(mesh=mesh, in_specs=({module_spec}, P("a")), out_specs=P("a"))
def apply(model, xb):
    return xb @ model.kernel[...]
y = apply(m, jnp.ones((8, 16)))
"""
    )


def test_a_module_split_nowhere_reaches_the_shard_map_body_whole() -> None:
    (y,) = [s for s in _shard_mapped("P()").sites if s.kind is SiteKind.SHARD_MAP_OUT]
    assert (y.shape, y.shard_shape) == ((8, 32), (4, 32))


def test_a_module_split_somewhere_is_not_guessed_in_the_body() -> None:
    """Each device sees a block of the kernel; the body's module is not modelled."""
    (y,) = [s for s in _shard_mapped('P(None, "b")').sites if s.kind is SiteKind.SHARD_MAP_OUT]
    assert y.shape is None
