"""Calls of Flax NNX layers in Explicit mode, judged by Flax itself: each program is analysed by
shardls and run under Flax 0.12 on 8 fake CPU devices (tests/core/types_source_worker.py, which
reports `jax.typeof` of every `v<i>` a statement binds, or the exception the program stops at).
Every typed `v<i>` must print as JAX prints it, every rejected call must be an error with JAX's
exception class where the call is written, and where shardls cannot know a parameter's layout
(an unknown initializer, `eager_sharding=False`) it gives no type at all."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from jax_oracle import ORACLE_ENV

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.core import Severity

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import run_under_jax

HEAD = """\
import functools
import os
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
from flax import nnx

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("data", None))
xm = jax.device_put(jnp.ones((8, 16)), P("data", "model"))
x3 = jax.device_put(jnp.ones((4, 8, 16)), P("data", None, None))
ids = jnp.zeros((8, 4), jnp.int32)
sharded_ids = jax.device_put(jnp.zeros((8, 4), jnp.int32), P("data", None))
lecun = nnx.initializers.lecun_normal()
"""

TYPED = """\
cols = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, (None, "model")), rngs=nnx.Rngs(0))
v1 = cols(x)
v2 = cols(xm)
v3 = cols(x3)
rows = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, ("model", None)), rngs=nnx.Rngs(0))
v4 = rows(x)
v5 = rows(xm, out_sharding=P("data", None))
biased = nnx.Linear(
    16,
    32,
    kernel_init=nnx.with_partitioning(lecun, (None, "model")),
    bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
    rngs=nnx.Rngs(0),
)
v6 = biased(x)
v7 = nnx.Linear(16, 32, rngs=nnx.Rngs(0))(xm)
v8 = nnx.Linear(16, 32, dtype=jnp.bfloat16, kernel_metadata={"out_sharding": (None, "model")}, rngs=nnx.Rngs(0))(x)
v9 = nnx.Linear(16, 32, use_bias=False, param_dtype=jnp.bfloat16, rngs=nnx.Rngs(0))(x.astype(jnp.bfloat16))
rules = [("embed", None), ("mlp", "model")]
logical = nnx.with_partitioning(lecun, ("embed", "mlp"), sharding_rules=rules)
v10 = nnx.Linear(16, 32, kernel_init=logical, rngs=nnx.Rngs(0))(x)
table = nnx.Embed(100, 16, embedding_init=nnx.with_partitioning(nnx.initializers.normal(), (None, "model")), rngs=nnx.Rngs(0))
v11 = table(ids)
v12 = table(sharded_ids, out_sharding=P("data", None, "model"))
v13 = table.attend(x)
v14 = table.attend(xm, out_sharding=P("data", None))
v15 = nnx.LayerNorm(16, rngs=nnx.Rngs(0))(xm)
v16 = nnx.LayerNorm(16, rngs=nnx.Rngs(0))(x.astype(jnp.bfloat16))
scaled = nnx.LayerNorm(16, scale_init=nnx.with_partitioning(nnx.initializers.ones_init(), ("model",)), rngs=nnx.Rngs(0))
v17 = scaled(x)
v18 = nnx.RMSNorm(16, rngs=nnx.Rngs(0))(xm)
v19 = nnx.RMSNorm(16, use_scale=False, rngs=nnx.Rngs(0))(x.astype(jnp.bfloat16))
v20 = nnx.RMSNorm(16, scale_init=nnx.with_partitioning(nnx.initializers.ones_init(), ("model",)), rngs=nnx.Rngs(0))(x3)
heads = nnx.with_partitioning(lecun, (None, "model", None))
v22 = nnx.LinearGeneral(16, (4, 8), kernel_init=heads, rngs=nnx.Rngs(0))(x)
v23 = nnx.LinearGeneral(
    (8, 16), 32, axis=(-2, -1), kernel_init=nnx.with_partitioning(lecun, (None, None, "model")), rngs=nnx.Rngs(0)
)(x3)
v24 = nnx.Einsum("bd,dhk->bhk", (16, 4, 8), (4, 8), kernel_init=heads, rngs=nnx.Rngs(0))(x)
v25 = nnx.Einsum("bsd,dhk->bshk", (16, 4, 8), kernel_init=heads, rngs=nnx.Rngs(0))(x3)
v26 = nnx.Einsum(" bd, dhk -> bhk", (16, 4, 8), rngs=nnx.Rngs(0))(x, out_sharding=P(None, "model"))
explicit = functools.partial(lecun, out_sharding=P(None, "model"))
v27 = nnx.Linear(16, 32, kernel_init=explicit, rngs=nnx.Rngs(0))(x)
on_mesh = nnx.with_partitioning(lecun, (None, "model"), mesh=mesh)
v28 = nnx.Linear(16, 32, kernel_init=on_mesh, rngs=nnx.Rngs(0))(x)
"""

MODULE = """\


class Block(nnx.Module):
    def __init__(self, d: int, hidden: int, rngs: nnx.Rngs):
        self.norm = nnx.RMSNorm(d, rngs=rngs)
        self.up = nnx.Linear(d, hidden, kernel_init=nnx.with_partitioning(lecun, (None, "model")), rngs=rngs)
        self.down = nnx.Linear(hidden, d, kernel_init=nnx.with_partitioning(lecun, ("model", None)), rngs=rngs)

    def __call__(self, x):
        h = jax.nn.relu(self.up(self.norm(x)))
        y = self.down(h, out_sharding=P("data", None))
        return y + x


block = Block(16, 64, nnx.Rngs(0))
v21 = block(x)
"""

BRANCHED = """\


class Decoder(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.rows = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, ("model", None)), rngs=rngs)

    def __call__(self, x, decode=False):
        if decode:
            return self.rows(x)  # rejected, but not run with decode=False
        return x * 2


v1 = Decoder(nnx.Rngs(0))(xm)
"""

REJECTED = {
    "contracting dimension sharded on both sides": """\
rows = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, ("model", None)), rngs=nnx.Rngs(0))
v1 = rows(xm)
""",
    "a mesh axis twice in the result": """\
clash = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, (None, "data")), rngs=nnx.Rngs(0))
v1 = clash(x)
""",
    "a gather with sharded indices": """\
table = nnx.Embed(100, 16, embedding_init=nnx.with_partitioning(nnx.initializers.normal(), (None, "model")), rngs=nnx.Rngs(0))
v1 = table(sharded_ids)
""",
    "a scale sharded like the batch": """\
norm = nnx.LayerNorm(16, scale_init=nnx.with_partitioning(nnx.initializers.ones_init(), ("data",)), rngs=nnx.Rngs(0))
v1 = norm(x)
""",
    "an unreduced input": """\
u = jnp.matmul(xm, jax.device_put(jnp.ones((16, 16)), P("model", None)), out_sharding=P("data", None, unreduced={"model"}))
v1 = nnx.LayerNorm(16, rngs=nnx.Rngs(0))(u)
""",
    "an einsum bias sharded like the batch": """\
biased = nnx.Einsum(
    "bd,dhk->bhk",
    (16, 4, 8),
    (4, 8),
    bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("data", None)),
    rngs=nnx.Rngs(0),
)
v1 = biased(x)
""",
    "inside a module's __call__": """\


class Block(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.up = nnx.Linear(16, 64, kernel_init=nnx.with_partitioning(lecun, (None, "model")), rngs=rngs)
        self.down = nnx.Linear(64, 16, kernel_init=nnx.with_partitioning(lecun, ("model", None)), rngs=rngs)

    def __call__(self, x):
        return self.down(jax.nn.relu(self.up(x)))


v1 = Block(nnx.Rngs(0))(x)
""",
}

UNKNOWN = """\
def zeros(key, shape, dtype):
    return jnp.zeros(shape, dtype)


v1 = nnx.Linear(16, 32, kernel_init=zeros, rngs=nnx.Rngs(0))(x)
meshes = {"main": mesh}
chosen = nnx.with_partitioning(lecun, (None, "model"), mesh=meshes[os.environ.get("NO_SUCH_VARIABLE", "main")])
v3 = nnx.Linear(16, 32, kernel_init=chosen, rngs=nnx.Rngs(0))(x)
with nnx.use_eager_sharding(False):
    v2 = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(lecun, (None, "model")), rngs=nnx.Rngs(0))(x)
"""


BEFORE_THE_MESH = """\
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
from flax import nnx

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
made_first = nnx.Linear(16, 32, kernel_init=init, rngs=nnx.Rngs(0))
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("data", None))
v1 = made_first(x)
"""
"""Flax raises where the layer is made (no mesh yet for its annotated kernel)."""


def _jax(programs: list[str]) -> list[list[list[str]]]:
    outcomes: list[list[list[str]]] = run_under_jax(programs, {**os.environ, **ORACLE_ENV})
    return outcomes


@pytest.fixture(scope="module")
def judged() -> dict[str, list[list[str]]]:
    """JAX's outcome for every program, run once for the module (one worker process)."""
    programs = {"typed": HEAD + TYPED, "module": HEAD + MODULE, "branched": HEAD + BRANCHED}
    programs["unknown"] = HEAD + UNKNOWN
    programs.update({name: HEAD + body for name, body in REJECTED.items()})
    outcomes = dict(zip(programs, _jax(list(programs.values())), strict=True))
    # A process of its own: the worker's programs share JAX's global mesh, which the others set.
    (outcomes["before the mesh"],) = _jax([BEFORE_THE_MESH])
    return outcomes


def _analysis(source: str, tmp_path: Path) -> FileAnalysis:
    return Analyzer().analyze(str(tmp_path / "model.py"), source)


def _bound_lines(source: str) -> list[int]:
    """The 0-based line of each statement that binds a `v<i>`, in order (as the worker reports)."""
    return [
        i for i, line in enumerate(source.splitlines()) if line.lstrip().startswith("v") and " = " in line
    ]


def _types(analysis: FileAnalysis, lines: list[int]) -> dict[int, str]:
    """The hover type of the name a `v<i>` line binds."""
    found: dict[int, str] = {}
    for site in analysis.names:
        if site.span.line in lines and site.name is not None and site.name.startswith("v") and site.jax_type:
            found.setdefault(site.span.line, site.jax_type)
    return found


@pytest.mark.parametrize("name", ["typed", "module", "branched"])
def test_a_layer_call_has_the_type_flax_gives(
    name: str, judged: dict[str, list[list[str]]], tmp_path: Path
) -> None:
    source = HEAD + {"typed": TYPED, "module": MODULE, "branched": BRANCHED}[name]
    lines = _bound_lines(source)
    theirs = judged[name]
    assert len(theirs) == len(lines) and all(outcome[0] == "ok" for outcome in theirs), theirs
    analysis = _analysis(source, tmp_path)
    ours = _types(analysis, lines)
    disagreements = [
        f"line {line + 1}: shardls {ours.get(line)}, jax {outcome[1]}"
        for line, outcome in zip(lines, theirs, strict=True)
        if ours.get(line) != outcome[1]
    ]
    assert not disagreements, "\n".join(disagreements)
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_a_rejected_layer_call_is_the_operation_s_error_at_the_call(
    name: str, judged: dict[str, list[list[str]]], tmp_path: Path
) -> None:
    source = HEAD + REJECTED[name]
    (outcome,) = judged[name]
    assert outcome[0] != "ok", outcome
    analysis = _analysis(source, tmp_path)
    errors = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.data.get("jax_error") == outcome[0]
    assert error.code.startswith("SH3")
    assert outcome[1].startswith(error.message[:60])
    lines = source.splitlines()
    written = lines[error.span.line][error.span.column : error.span.end_column]
    assert written.startswith(
        ("rows(", "clash(", "table(", "norm(", "biased(", "nnx.LayerNorm(", "self.down(")
    )
    assert not _types(analysis, _bound_lines(source))


def test_a_parameter_whose_layout_is_not_known_gives_no_type(
    judged: dict[str, list[list[str]]], tmp_path: Path
) -> None:
    source = HEAD + UNKNOWN
    # the worker sees top-level names only (not v2, in its `with` block)
    assert judged["unknown"] == [["ok", "float32[8@data,32]"], ["ok", "float32[8@data,32@model]"]]
    analysis = _analysis(source, tmp_path)
    assert not _types(analysis, _bound_lines(source))
    assert not analysis.diagnostics


def test_a_layer_made_before_its_mesh_is_set_gives_no_type(
    judged: dict[str, list[list[str]]], tmp_path: Path
) -> None:
    assert judged["before the mesh"] == []  # Flax raised before any `v<i>`
    analysis = _analysis(BEFORE_THE_MESH, tmp_path)
    assert not _types(analysis, _bound_lines(BEFORE_THE_MESH))


def test_the_layer_s_own_lines_say_where_its_axes_come_from(tmp_path: Path) -> None:
    source = HEAD + TYPED
    analysis = _analysis(source, tmp_path)
    line = source.splitlines().index("v1 = cols(x)")
    (site,) = [s for s in analysis.names if s.span.line == line and s.name == "v1"]
    placed = 1 + next(i for i, text in enumerate(source.splitlines()) if text.startswith("x = "))
    made = 1 + next(i for i, text in enumerate(source.splitlines()) if text.startswith("cols = "))
    assert set(site.type_sources) == {
        f"data: device_put at line {placed}",
        f"model: Linear.kernel at line {made}",
    }


def test_the_names_inside_a_module_s_call_have_their_types(tmp_path: Path) -> None:
    """`Block(...)(x)` runs `__call__` with x's type, so each name of its body has a hover (the
    whole call's result is judged by Flax above)."""
    source = HEAD + MODULE
    analysis = _analysis(source, tmp_path)
    body = {(s.name, s.jax_type) for s in analysis.names if s.name in ("h", "y")}
    assert body == {("h", "float32[8@data,64@model]"), ("y", "float32[8@data,16]")}
