"""`jax.jit` (and `pjit`) in/out shardings: layouts at the calls, the shapes inside the function,
and the errors JAX raises, judged by running the same programs under real JAX
(judge_wrapped.py), plus checks of what the analysis says where JAX has nothing to compare."""

from __future__ import annotations

import pytest
from judge_wrapped import judge

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, SiteKind

HEADER = """\
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
rows = NamedSharding(mesh, P("data"))
cols = NamedSharding(mesh, P(None, "model"))
"""

PROGRAMS = {
    "call_form": """
def matmul(x, w):
    return x @ w  # expect: x, w

f = jax.jit(matmul, in_shardings=(rows, cols), out_shardings=NamedSharding(mesh, P("data", "model")))
y = f(jnp.zeros((16, 32)), jnp.zeros((32, 64)))  # expect: y
immediate = jax.jit(lambda a: a + 1, out_shardings=cols)(jnp.zeros((4, 8)))  # expect: immediate
""",
    "decorators": """
@partial(jax.jit, in_shardings=rows, out_shardings=cols)
def double(a):
    return a * 2  # expect: a

@functools.partial(jax.jit, out_shardings=NamedSharding(mesh, P(("data", "model"))))
def table():
    return jnp.zeros((64, 4))

@jax.jit(in_shardings=(cols,), out_shardings=rows)
def negate(b):
    return -b  # expect: b

class Trainer:
    def __init__(self, scale):
        self.scale = scale

    @partial(jax.jit, static_argnums=0, in_shardings=rows, out_shardings=cols)
    def step(self, batch):
        return batch * self.scale  # expect: batch

d = double(jnp.ones((8, 8)))  # expect: d
t = table()  # expect: t
n = negate(jnp.ones((6, 4)))  # expect: n
trained = Trainer(3).step(jnp.ones((8, 12)))  # expect: trained
""",
    "pjit": """
from jax.experimental.pjit import pjit

def add(p, q):
    return p + q  # expect: p, q

step = pjit(add, (rows, rows), cols)
s = step(jnp.ones((8, 16)), jnp.ones((8, 16)))  # expect: s
""",
    # pjit spelled as `partial(pjit, ...)` (EasyLM's llama_serve.py) takes bare specs from
    # `with mesh:` like `pjit(...)` does; `partial(jax.jit, ...)` does not.
    "partial_pjit": """
from jax.experimental.pjit import pjit

@partial(pjit, in_shardings=(P("data"), P()), out_shardings=(P(), P()))
def total(a, b):
    return a.sum(), b

@partial(jax.jit, in_shardings=(P("data"),), out_shardings=P())
def jitted_total(a):
    return a.sum()

with mesh:
    t, u = total(jnp.ones((8, 4)), jnp.ones((3,)))  # expect: t, u
    missing = jitted_total(jnp.ones((8, 4)))  # expect-error: SH202
""",
    "pytrees": """
def loss(params, batch, scale):
    return params["w"] * scale + batch, params["b"]  # expect: batch

params = {"w": jnp.ones((8, 16)), "b": jnp.ones((16,))}
train = jax.jit(
    loss,
    in_shardings=({"w": cols, "b": NamedSharding(mesh, P("model"))}, rows),
    out_shardings=(rows, NamedSharding(mesh, P())),
    static_argnums=(2,),
)
out, bias = train(params, jnp.ones((8, 16)), 3)  # expect: out, bias
""",
    "bare_specs": """
def identity(v):
    return v  # expect: v

with jax.set_mesh(mesh):
    g = jax.jit(identity, in_shardings=P("model"), out_shardings=P(None, "model"))
    z = g(np.ones((8, 8), np.float32))  # expect: z

h = jax.jit(identity, out_shardings=P("data"))
missing = h(np.ones((4, 8), np.float32))  # expect-error: SH202
""",
    "errors": """
def keep(k):
    return k * 1

f_in = jax.jit(keep, in_shardings=cols)
ok = f_in(np.ones((4, 8), np.float32))
bad_in = f_in(np.ones((4, 6), np.float32))  # expect-error: SH001
f_out = jax.jit(keep, out_shardings=NamedSharding(mesh, P("data", "model")))
bad_out = f_out(np.ones((3, 8), np.float32))  # expect-error: SH001
long_spec = jax.jit(keep, in_shardings=NamedSharding(mesh, P("data", "model")))
bad_rank = long_spec(np.ones((8,), np.float32))  # expect-error: SH002
loose = jax.jit(keep, in_shardings=NamedSharding(mesh, P(P.UNCONSTRAINED)))  # expect-error: SH008
typo = jax.jit(keep, out_shardings=NamedSharding(mesh, P("modle")))  # expect-error: SH005
twice = jax.jit(keep, in_shardings=NamedSharding(mesh, P("data", "data")))  # expect-error: SH004
""",
    "init": """
D, F = 64, 256

def init(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (D, F)), jax.random.normal(k2, (F, D))

shardings = (NamedSharding(mesh, P("data", "model")), NamedSharding(mesh, P("model", "data")))
init_fn = jax.jit(init, out_shardings=shardings)
w_in, w_out = init_fn(jax.random.key(0))  # expect: w_in, w_out
abstract_in, abstract_out = init_fn.eval_shape(jax.random.key(0))  # expect: abstract_in, abstract_out
compiled = jax.jit(init, out_shardings=shardings).lower(jax.random.key(0)).compile()
shape_only = jax.jit(init, out_shardings=shardings).eval_shape(jax.random.key(1))
""",
    # Without out_shardings, an elementwise function of a sharded argument keeps its sharding.
    "predicted": """
def twice(e):
    return e * 2 + 1

keep_layout = jax.jit(twice, in_shardings=cols)
kept = keep_layout(np.ones((4, 8), np.float32))  # expect: kept
""",
    # The body of a function jitted by a call sees the arguments of the calls of its jitted name.
    "body": """
def constrain(c):
    inner = jax.lax.with_sharding_constraint(c, NamedSharding(mesh, P("model", "data")))  # expect: inner
    return inner

def main():
    step = jax.jit(constrain, in_shardings=rows, out_shardings=rows)
    return step(jnp.ones((8, 6)))

result = main()
""",
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return judge({name: HEADER + text for name, text in PROGRAMS.items()}, tmp_path_factory.mktemp("jit"))


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_agrees_with_jax(program: str, verdicts: dict[str, list[str]]) -> None:
    assert not verdicts[program], "\n".join(verdicts[program])


# -- what JAX cannot be asked --------------------------------------------------------------------


def analyze(text: str) -> FileAnalysis:
    return Analyzer().analyze("program.py", HEADER + text)


def test_bare_spec_without_a_visible_call_is_not_reported() -> None:
    """JAX reads the context mesh only when the jitted function is called, maybe elsewhere."""
    analysis = analyze('f = jax.jit(lambda x: x, in_shardings=P("data"))\n')
    assert not analysis.diagnostics
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.JIT_IN]
    assert site.mesh is not None and site.mesh.selection == "the only mesh in this file"


def test_sites_are_named_after_parameters_and_targets() -> None:
    analysis = analyze(
        "def f(x, y):\n"
        "    return x\n"
        "step = jax.jit(f, in_shardings=(rows, cols), out_shardings=rows)\n"
        "out = step(jnp.zeros((8, 8)), jnp.zeros((8, 8)))\n"
        "step(jnp.zeros((8, 8)), jnp.zeros((8, 8)))\n"
    )
    first = HEADER.count("\n")
    called = [s for s in analysis.sites if s.shape is not None]
    assert sorted((s.span.line - first, s.kind.value, s.name) for s in called) == sorted(
        [
            # Where the shardings are written: the arrays both calls agree on.
            (2, "jit_in_sharding", "x"),
            (2, "jit_in_sharding", "y"),
            (2, "jit_out_sharding", "f(...)"),
            (3, "jit_in_sharding", "x"),
            (3, "jit_in_sharding", "y"),
            (3, "jit_out_sharding", "out"),
            (4, "jit_in_sharding", "x"),
            (4, "jit_in_sharding", "y"),
            (4, "jit_out_sharding", "f(...)"),
            # The NamedShardings the prelude builds take the shape their uses here agree on.
            (-2, "named_sharding", "rows"),
            (-1, "named_sharding", "cols"),
        ]
    )


def _written(analysis: FileAnalysis, line: int) -> list[tuple[str, str | None, object]]:
    """(kind, name, per-device shape) of the jit sites on `line` of the text after HEADER."""
    first = HEADER.count("\n")
    return sorted(
        (s.kind.value, s.name, s.shard_shape)
        for s in analysis.sites
        if s.kind in (SiteKind.JIT_IN, SiteKind.JIT_OUT) and s.span.line - first == line
    )


def test_written_shardings_take_the_arrays_every_call_agrees_on() -> None:
    """Decorated or not, the sharding where it is written shows what each call lays out with it
    (flax_on_pjit.ipynb: `jax.jit(init_fn, in_shardings=(..., x_sharding))` called once)."""
    analysis = analyze(
        "@partial(jax.jit, in_shardings=(rows, cols), out_shardings=rows)\n"
        "def step(x, w):\n"
        "    return x @ w\n"
        "y = step(jnp.zeros((8, 16)), jnp.zeros((16, 8)))\n"
        "z = step(jnp.zeros((8, 16)), jnp.zeros((16, 8)))\n"
    )
    assert _written(analysis, 0) == [
        ("jit_in_sharding", "w", (16, 2)),
        ("jit_in_sharding", "x", (4, 16)),
        ("jit_out_sharding", "step(...)", (4, 8)),
    ]
    assert not analysis.diagnostics


def test_written_shardings_met_by_different_arrays_stay_unknown() -> None:
    """Two calls with other shapes: the written sharding has no shape of its own (never one of
    them picked), and an uneven call is reported once, at that call, where JAX raises it."""
    analysis = analyze(
        "double = jax.jit(lambda a: a * 2, in_shardings=rows)\n"
        "small = double(jnp.zeros((8, 4)))\n"
        "large = double(jnp.zeros((16, 4)))\n"
        "bad = double(jnp.zeros((3, 4)))\n"
    )
    assert _written(analysis, 0) == [("jit_in_sharding", "<lambda>", None)]
    first = HEADER.count("\n")
    assert [(d.code, d.span.line - first) for d in analysis.diagnostics] == [("SH001", 3)]


def test_written_sharding_of_an_uneven_call_reports_at_the_call_only() -> None:
    analysis = analyze(
        "double = jax.jit(lambda a: a * 2, in_shardings=rows)\nbad = double(jnp.zeros((3, 4)))\n"
    )
    first = HEADER.count("\n")
    assert [(d.code, d.span.line - first) for d in analysis.diagnostics] == [("SH001", 1)]
    (written,) = [s for s in analysis.sites if s.kind is SiteKind.JIT_IN and s.span.line == first]
    assert written.shape == (3, 4)


def test_predicted_output_is_labelled_and_reports_nothing() -> None:
    analysis = analyze(
        "f = jax.jit(lambda x: x * 2, in_shardings=cols)\n"
        "bad = f(jnp.zeros((8, 6)))\n"  # the input is indivisible: one error, on the input only
    )
    assert [d.code for d in analysis.diagnostics] == ["SH001"]
    (predicted,) = [s for s in analysis.sites if s.kind is SiteKind.JIT_OUT]
    assert any("predicted" in note for note in predicted.assumptions)


def test_methods_of_jitted_functions_do_not_crash() -> None:
    analysis = analyze(
        "def init(key):\n"
        "    return jax.random.normal(key, (16, 32))\n"
        "j = jax.jit(init, out_shardings=cols)\n"
        "lowered = j.lower(jax.random.key(0))\n"
        "text = lowered.compile().as_text()\n"
        "shape = j.eval_shape(jax.random.key(0)).shape\n"
        "other = jax.jit(init).trace(jax.random.key(0))\n"
    )
    outputs = [s for s in analysis.sites if s.kind is SiteKind.JIT_OUT and s.shape is not None]
    assert {s.shard_shape for s in outputs} == {(16, 8)}
    assert not analysis.diagnostics
