"""`jax.shard_map`: per-device blocks inside the function, global outputs, and the errors JAX
raises, judged by running the same programs under real JAX (judge_wrapped.py), plus a few
checks of what the analysis says where JAX has nothing to compare."""

from __future__ import annotations

import ast

import pytest
from judge_wrapped import judge

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.analysis.recognizers import shard_map as shard_map_recognizer

HEADER = """\
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
"""

PROGRAMS = {
    # Reference §5: the block each in_spec gives a (16, 32) array on data=2, model=4.
    "blocks": """
def replicated(a):
    return a  # expect: a
def by_data(b):
    return b  # expect: b
def by_model(c):
    return c  # expect: c
def columns(d):
    return d  # expect: d
def both(e):
    return e  # expect: e
def flattened(g):
    return g  # expect: g
x = jnp.zeros((16, 32))
r1 = jax.shard_map(replicated, mesh=mesh, in_specs=P(), out_specs=P(), check_vma=False)(x)  # expect: r1
r2 = jax.shard_map(by_data, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(x)  # expect: r2
r3 = jax.shard_map(by_model, mesh=mesh, in_specs=P("model"), out_specs=P("model"))(x)  # expect: r3
r4 = jax.shard_map(columns, mesh=mesh, in_specs=P(None, "model"), out_specs=P(None, "model"))(x)  # expect: r4
r5 = jax.shard_map(both, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", "model"))(x)  # expect: r5
r6 = jax.shard_map(flattened, mesh=mesh, in_specs=P(("data", "model")), out_specs=P(("data", "model")))(x)  # expect: r6
""",
    # The global output is the block times the sizes of the out_specs axes.
    "outputs": """
def same(block):
    return block  # expect: block
x = jnp.zeros((16, 32))
wide = jax.shard_map(same, mesh=mesh, in_specs=P("data"), out_specs=P(("data", "model")))(x)  # expect: wide
cols = jax.shard_map(same, mesh=mesh, in_specs=P("data"), out_specs=P(None, "data"))(x)  # expect: cols
grid = jax.shard_map(same, mesh=mesh, in_specs=P("data"), out_specs=P("data", "model"))(x)  # expect: grid
one = jax.shard_map(same, mesh=mesh, in_specs=P("data"), out_specs=P(), check_vma=False)(x)  # expect: one
""",
    # Decorator forms, and the mesh taken from `jax.set_mesh` when `mesh=` is omitted.
    "decorators": """
@partial(jax.shard_map, mesh=mesh, in_specs=(P("data"), P()), out_specs=P("data"))
def add_bias(rows, bias):
    return rows + bias  # expect: rows, bias

@jax.shard_map(mesh=mesh, in_specs=P(None, "model"), out_specs=P(None, "model"))
def scale(cols):
    return cols * 2  # expect: cols

@jax.shard_map(in_specs=P("model"), out_specs=P("model"))
def negate(part):
    return -part  # expect: part

y = add_bias(jnp.ones((8, 4)), jnp.ones((4,)))  # expect: y
z = scale(jnp.ones((6, 16)))  # expect: z
with jax.set_mesh(mesh):
    n = negate(jnp.ones((8, 3)))  # expect: n
""",
    # The legacy positional API, a lambda, and a function that is only ever called through a name.
    "legacy": """
from jax.experimental.shard_map import shard_map

def body(v):
    return v + 1  # expect: v

old = shard_map(body, mesh, P("data", "model"), P("data", "model"), check_rep=False)
o = old(jnp.ones((4, 8)))  # expect: o
lam = jax.shard_map(lambda w: w * 3, mesh=mesh, in_specs=P("model"), out_specs=P(("model", "data")))(jnp.ones((8, 2)))  # expect: lam
""",
    # Bodies whose result is not the parameter itself: a collective, elementwise arithmetic, matmul.
    "bodies": """
def local_matmul(xb, wb):
    partial_sum = xb @ wb  # expect: xb, wb
    return jax.lax.psum(partial_sum, "model")

def affine(u, s):
    return u * s + 1.0  # expect: u, s

mm = jax.shard_map(local_matmul, mesh=mesh, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data", None))
prod = mm(jnp.ones((16, 32)), jnp.ones((32, 8)))  # expect: prod
aff = jax.shard_map(affine, mesh=mesh, in_specs=(P("data"), P("data")), out_specs=P("data"))
res = aff(jnp.ones((8, 4)), jnp.ones((8, 4)))  # expect: res
""",
    # Partial manual mode, and with_sharding_constraint inside the body on the remaining Auto axis.
    "partial_manual": """
def rows_only(t):
    constrained = jax.lax.with_sharding_constraint(t, P(None, "model"))  # expect: constrained
    return constrained

def untouched(v):
    return v * 2  # expect: v

pm = jax.shard_map(rows_only, mesh=mesh, in_specs=P("data"), out_specs=P("data"), axis_names={"data"})
constrained_out = pm(jnp.ones((16, 32)))
plain = jax.shard_map(untouched, mesh=mesh, in_specs=P("data"), out_specs=P("data"), axis_names={"data"})
out = plain(jnp.ones((16, 32)))  # expect: out
bad = jax.shard_map(lambda q: q, mesh=mesh, in_specs=P("model"), out_specs=P("model"), axis_names={"data"})
wrong = bad(jnp.ones((16, 32)))  # expect-error: SH005
""",
    # Partial manual mode with in_specs omitted (jax tests/pjit_test.py): on an Explicit mesh each
    # argument's type gives its block, and its Explicit axes outside axis_names stay in the type.
    "inferred_partial_manual": """
from jax.sharding import AxisType
explicit = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
with jax.set_mesh(explicit):
    placed = jax.device_put(np.ones((8, 4)), P("x", "y"))

    @jax.jit
    @partial(jax.shard_map, out_specs=P("x"), axis_names={"x"})
    def rows(t):
        return t

    rows(placed)

    @partial(jax.shard_map, in_specs=P("x", "y"), out_specs=P("x"), axis_names={"x"})
    def stated(t):
        return t

    refused = stated(placed)  # expect-error: SH005
""",
    # Errors JAX raises when the function is called.
    "errors": """
def keep(k):
    return k  # expect: k

f = jax.shard_map(keep, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", "model"))
ok = f(jnp.ones((4, 8)))  # expect: ok
uneven = f(jnp.ones((15, 8)))  # expect-error: SH001
too_long = f(jnp.ones((8,)))  # expect-error: SH002
loose = jax.shard_map(keep, mesh=mesh, in_specs=P(P.UNCONSTRAINED), out_specs=P())
u = loose(jnp.ones((8, 8)))  # expect-error: SH008
typo = jax.shard_map(keep, mesh=mesh, in_specs=P("modle"), out_specs=P("modle"))
t = typo(jnp.ones((8, 8)))  # expect-error: SH005
twice = jax.shard_map(keep, mesh=mesh, in_specs=P("data", "data"), out_specs=P())
tw = twice(jnp.ones((8, 8)))  # expect-error: SH004
""",
    # The mesh: none at all, and a mesh= that differs from the context mesh.
    "meshes": """
other = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))

@jax.shard_map(in_specs=P("data"), out_specs=P("data"))
def no_mesh(m):
    return m

@partial(jax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P("data"))
def pinned(p):
    return p  # expect: p

missing = no_mesh(jnp.ones((8, 4)))  # expect-error: SH202
fine = pinned(jnp.ones((8, 4)))  # expect: fine
with jax.set_mesh(other):
    clash = pinned(jnp.ones((8, 4)))  # expect-error: SH211
with mesh:
    legacy_context = no_mesh(jnp.ones((8, 4)))  # expect-error: SH202

# Called by a function that only other files call, under a mesh of theirs: no error here.
def generate(x):
    return helper(x)

def helper(x):
    return no_mesh(x)
""",
    # shard_map wrapped by jit, and applied inside a jitted function.
    "under_jit": """
def block_sum(bs):
    return bs * 2  # expect: bs

step = jax.jit(jax.shard_map(block_sum, mesh=mesh, in_specs=P(("data", "model")), out_specs=P(("data", "model"))))
total = step(jnp.ones((32, 4)))  # expect: total

def rows(rr):
    return rr + 1  # expect: rr

@jax.jit
def outer(a):
    return jax.shard_map(rows, mesh=mesh, in_specs=P("data"), out_specs=P("data"))(a)

res = outer(jnp.ones((8, 6)))
""",
    # A tuple of outputs unpacked into names, and an Explicit mesh whose arguments carry their layout.
    "tuples": """
from jax.sharding import AxisType

def split(x1, x2):
    return x1, x2 * 2  # expect: x1, x2

pair = jax.shard_map(split, mesh=mesh, in_specs=(P("data"), P("model")), out_specs=(P("data"), P("model")))
first, second = pair(jnp.ones((8, 2)), jnp.ones((16, 3)))  # expect: first, second

explicit = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
with jax.set_mesh(explicit):
    e = jax.device_put(jnp.ones((8, 8)), P("data", "model"))
    ex = jax.shard_map(lambda eb: eb, in_specs=P("data", "model"), out_specs=P("data", "model"))(e)  # expect: ex
""",
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return judge(
        {name: HEADER + text for name, text in PROGRAMS.items()}, tmp_path_factory.mktemp("shard_map")
    )


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_agrees_with_jax(program: str, verdicts: dict[str, list[str]]) -> None:
    assert not verdicts[program], "\n".join(verdicts[program])


# -- what JAX cannot be asked --------------------------------------------------------------------


def analyze(text: str) -> FileAnalysis:
    return Analyzer().analyze("program.py", HEADER + text)


def test_uncalled_shard_map_checks_its_specs_where_they_are_written() -> None:
    analysis = analyze(
        'f = jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("modle"), out_specs=P("data"))\n'
    )
    (error,) = [d for d in analysis.diagnostics if d.code == "SH005"]
    assert error.span.line == HEADER.count("\n")  # on the P("modle") of the uncalled shard_map
    kinds = {s.kind for s in analysis.sites}
    assert {SiteKind.SHARD_MAP_IN, SiteKind.SHARD_MAP_OUT} <= kinds


def test_body_parameters_are_blocks_for_with_sharding_constraint() -> None:
    analysis = analyze(
        "def body(x):\n"
        '    y = jax.lax.with_sharding_constraint(x, P("data"))\n'
        "    return y\n"
        'g = jax.shard_map(body, mesh=mesh, in_specs=P("model"), out_specs=P("model"))\n'
        "out = g(jnp.zeros((16, 32)))\n"
    )
    (constraint,) = [s for s in analysis.sites if s.kind is SiteKind.CONSTRAINT]
    assert constraint.shape == (4, 32)
    assert "inside the shard_map" in (constraint.mesh.selection if constraint.mesh else "")
    # 'data' is Manual inside a full-manual shard_map: with_sharding_constraint cannot name it.
    assert [d.code for d in analysis.diagnostics] == ["SH014"]


def test_output_site_names_follow_the_assignment() -> None:
    analysis = analyze(
        'g = jax.shard_map(lambda x: (x, x), mesh=mesh, in_specs=P("data"), out_specs=(P("data"), P()))\n'
        "a, b = g(jnp.zeros((8, 2)))\n"
        "g(jnp.zeros((8, 2)))\n"
    )
    names = sorted(s.name or "" for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_OUT)
    assert names == ["<lambda>(...)[0]", "<lambda>(...)[1]", "a", "b"]


def test_unknown_mesh_and_unknown_arguments_do_not_crash() -> None:
    analysis = analyze(
        "def make(cfg):\n"
        "    return jax.shard_map(lambda x: x, mesh=cfg.mesh, in_specs=cfg.specs, out_specs=P())\n"
        "h = make(object())\n"
        "h(load())\n"
    )
    assert not [d for d in analysis.diagnostics if d.code.startswith("SH0")]


def test_a_body_on_a_mesh_jax_rejects_is_not_typed() -> None:
    """`("fsdp" "context")` is one axis name for two sizes and two types (found by the server
    fuzzer): JAX rejects the mesh where it is built, and the body, which never runs, is not typed
    on it (its Manual axes were paired with the types one by one, and that raised)."""
    analysis = analyze(
        'bad = jax.make_mesh((2, 4), ("fsdp" "context"), axis_types=(jax.sharding.AxisType.Auto,) * 2)\n'
        '@jax.shard_map(mesh=bad, in_specs=P("fsdp"), out_specs=P("fsdp"))\n'
        "def on_bad(x):\n"
        "    return x\n"
        "y = on_bad(jnp.ones((8, 4)))\n"
    )
    made = HEADER.count("\n")
    assert {"SH102", "SH108"} <= {d.code for d in analysis.diagnostics if d.span.line == made}


def test_a_python_number_passed_is_a_0d_array_on_every_device() -> None:
    """flax rng_guide.ipynb: `shmap_forward(variables, x, True, apply_rngs)` with `P()` for the
    bool: JAX makes a 0-d array of it, a copy per device, and the body gets that array."""
    analysis = analyze(
        "def forward(x, add_noise, scale, steps):\n"
        "    return jnp.where(add_noise, x * scale, x) + steps\n"
        "f = jax.shard_map(forward, mesh=mesh, in_specs=(P('data'), P(), P(), P()), out_specs=P('data'))\n"
        "out = f(jnp.zeros((8, 4)), True, 0.5, 3)\n"
    )
    inputs = {s.name: s for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_IN}
    shapes = {name: (site.shape, site.shard_shape, site.dtype.name) for name, site in inputs.items()}
    assert shapes["add_noise"] == ((), (), "bool")
    assert shapes["scale"] == ((), (), "float32")
    assert shapes["steps"] == ((), (), "int32")
    assert [s.shard_shape for s in analysis.sites if s.name == "out"] == [(4, 4)]
    assert not analysis.diagnostics


def test_an_output_of_known_rank_has_that_rank_whatever_its_sizes() -> None:
    """maxtext usp_collective_test.py: the body keeps its ring chunk with
    `jax.lax.dynamic_slice_in_dim(out, start, chunk, axis=2)`, `chunk` computed from a size not
    known here: the output is rank 4, the unsplit dimensions the block's."""
    analysis = analyze(
        "def body(x):\n"
        "    chunk = x.shape[1] // ring_size()\n"
        "    return jax.lax.dynamic_slice_in_dim(x, 0, chunk, axis=1)\n"
        "f = jax.shard_map(body, mesh=mesh, in_specs=P('data', 'model'), out_specs=P('data', 'model'))\n"
        "out = f(jnp.zeros((8, 16)))\n"
    )
    out = next(s for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_OUT)
    assert out.shape is not None and len(out.shape) == 2
    assert out.shard_shape is not None and out.shard_shape[0] == 4


def test_a_leaf_path_step_is_read_as_literal_eval_reads_it_without_it_where_plain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ast.literal_eval` makes a cycle of functions per call, garbage for the collector: a plain
    step (`[0]`, `['kernel']`) is read without it, one with an escape still by it."""
    steps = ["0", "12", "'kernel'", "''", "'a\\\\nb'"]
    expected = [ast.literal_eval(step) for step in steps]
    asked: list[str] = []
    literal_eval = ast.literal_eval
    monkeypatch.setattr(ast, "literal_eval", lambda text: asked.append(text) or literal_eval(text))
    assert [shard_map_recognizer._key(step) for step in steps] == expected
    assert asked == ["'a\\\\nb'"]
