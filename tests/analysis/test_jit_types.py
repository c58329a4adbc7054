"""`jax.jit` with `in_shardings=`/`out_shardings=` on typed arrays, judged by real JAX.

Each program is module code a user writes (an Explicit mesh under `jax.set_mesh`, arrays placed
on it, jitted functions in the call form, as `step = jax.jit(...)` and as `@partial(jax.jit, ...)`
decorators). tests/core/types_source_worker.py runs it under JAX on fake CPU devices and says,
for every statement that binds `v<i>`, what `jax.typeof` gives or which exception it raises (the
program stops there). shardls must agree: the hover type of each such name is JAX's, an error is
reported on exactly the lines where JAX raises (with JAX's exception class when the diagnostic
names one), and nowhere else. A line marked `# undecided` is one where JAX raises and shardls
must report nothing, because the answer depends on what the types do not say.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.core import Severity

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import fake_devices_env, run_under_jax

UNDECIDED = "# undecided"

EXPLICIT = """\
# shardls: device-count=8
from functools import partial
import numpy as np
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))
rows = jax.device_put(jnp.ones((8, 16)), P("X", None))
w = jax.device_put(jnp.ones((16, 32)), P("Y", None))
def double(a):
    return a * 2
def add(a, b):
    return a + b
def scale(a, n):
    return a * n
def pair(a):
    return (a, a.T)
def partial_sums(a, b):
    return jnp.matmul(a, b, out_sharding=P("X", None, unreduced={"Y"}))
"""

MIXED = EXPLICIT.replace("(AxisType.Explicit,) * 2", "(AxisType.Explicit, AxisType.Auto)")
SIZE_ONE = EXPLICIT.replace("make_mesh((2, 4)", "make_mesh((1, 8)")

PROGRAMS = {
    "matching in_shardings keep the argument's type": """
v1 = jax.jit(double, in_shardings=P("X", "Y"))(x)
v2 = jax.jit(double, in_shardings=P("X"))(rows)
v3 = jax.jit(double, in_shardings=NamedSharding(mesh, P("X", "Y")))(x)
v4 = jax.jit(double, in_shardings=(P("X", "Y"),))(x)
v5 = jax.jit(double, in_shardings=None)(x)
v6 = jax.jit(double, in_shardings=P())(jnp.ones((8, 16)))
v7 = v1 + v3
""",
    "an argument sharded otherwise is refused": """
v1 = jax.jit(double, in_shardings=P("X", None))(x)
""",
    "a replicated array is refused by a sharded in_sharding": """
v1 = jax.jit(double, in_shardings=P("X"))(jnp.ones((8, 16)))
""",
    "an in_sharding of P() refuses a sharded array": """
v1 = jax.jit(double, in_shardings=P())(x)
""",
    "out_shardings give the result its type": """
v1 = jax.jit(double, out_shardings=P("X", None))(x)
v2 = jax.jit(double, out_shardings=P())(x)
v3 = jax.jit(double, out_shardings=P("Y", "X"))(x)
v4 = jax.jit(double, out_shardings=P("X", "Y"))(jnp.ones((8, 16)))
v5 = jax.jit(double, out_shardings=NamedSharding(mesh, P(None, "X")))(x)
v6 = jax.jit(double, out_shardings=None)(x)
v7 = v1 @ w
""",
    "a result typed by out_shardings is typed downstream": """
v1 = jax.jit(double, out_shardings=P(None, "Y"))(x)
v2 = v1 @ w
""",
    "a jitted function bound to a name": """
step = jax.jit(double, in_shardings=P("X", "Y"), out_shardings=P(None, "Y"))
v1 = step(x)
v2 = step(v1)
""",
    "decorated functions": """
@partial(jax.jit, in_shardings=P("X", None), out_shardings=P())
def add_one(a):
    return a + 1
v1 = add_one(rows)
v2 = add_one(jax.sharding.reshard(x, P("X", None)))
v3 = add_one(x)
""",
    "one spec for every argument": """
v1 = jax.jit(add, in_shardings=P("X", "Y"))(x, x)
v2 = jax.jit(add, in_shardings=P("X", "Y"))(x, rows)
""",
    "a tuple of in_shardings, one per argument": """
v1 = jax.jit(add, in_shardings=(P("X", "Y"), P("X", None)))(x, rows)
v2 = jax.jit(add, in_shardings=(P("X", "Y"), P("X", "Y")))(x, rows)
""",
    "static arguments take no sharding": """
v1 = jax.jit(scale, static_argnums=1, in_shardings=P("X", "Y"))(x, 3)
v2 = jax.jit(scale, static_argnums=1, in_shardings=P("X", None))(x, 3)
""",
    "a tuple of results and out_shardings": """
v1 = jax.jit(pair, out_shardings=(P(), P("Y")))(x)[1]
v2 = jax.jit(pair, out_shardings=P("X"))(x)[0]
""",
    "unreduced partial sums are reduced by out_shardings": """
v1 = jax.jit(partial_sums, out_shardings=P("X", None))(x, w)
v2 = jax.jit(partial_sums)(x, w)
""",
    "inside another jit an inner jit's shardings do nothing": """
def outer(a):
    return jax.jit(double, in_shardings=P("X", None), out_shardings=P(None, "X"))(a)
v1 = jax.jit(outer)(x)
""",
    "numpy arguments are never refused": """
v1 = jax.jit(double, in_shardings=P("X", "Y"), out_shardings=P("X", None))(np.ones((8, 16), np.float32))
""",
}

PROGRAMS_ON = {
    "an axis of size 1 shards nothing": (
        SIZE_ONE,
        """
v1 = jax.jit(double, in_shardings=P(None, "Y"))(jax.device_put(jnp.ones((8, 16)), P("X", "Y")))
v2 = jax.jit(double, out_shardings=P("X", "Y"))(v1)
""",
    ),
    "mixed meshes: only the Explicit axes are judged": (
        MIXED,
        """
v1 = jax.jit(double, in_shardings=P("X", "Y"))(x)
v2 = jax.jit(double, out_shardings=P(None, "Y"))(x)
v3 = jax.jit(double, in_shardings=P(None, "Y"))(x)
""",
    ),
    "mixed meshes: a difference along Auto axes is not in the type": (
        MIXED,
        """
v1 = jax.jit(double, in_shardings=P("X", None))(x)  # undecided
""",
    ),
}

SOURCES = {name: EXPLICIT + body for name, body in PROGRAMS.items()} | {
    name: header + body for name, (header, body) in PROGRAMS_ON.items()
}


@pytest.fixture(scope="module")
def jax_outcomes() -> dict[str, list[list[str]]]:
    names = list(SOURCES)
    return dict(
        zip(names, run_under_jax([SOURCES[name] for name in names], fake_devices_env(8)), strict=True)
    )


def _bound_lines(source: str) -> list[int]:
    return [i for i, line in enumerate(source.splitlines()) if line.startswith("v")]


def _type_at(analysis: FileAnalysis, line: int) -> str | None:
    for site in analysis.names:
        if site.kind is SiteKind.ARRAY_NAME and site.span.line == line and site.span.column == 0:
            return site.jax_type
    return None


def _problems_at(analysis: FileAnalysis, line: int) -> list[tuple[str, str | None, Severity]]:
    return [
        (d.code, str(d.data["jax_error"]) if "jax_error" in d.data else None, d.severity)
        for d in analysis.diagnostics
        if d.span.line == line and d.severity is not Severity.INFO
    ]


@pytest.mark.parametrize("name", list(SOURCES))
def test_shardls_agrees_with_jax(name: str, jax_outcomes: dict[str, list[list[str]]]) -> None:
    source = SOURCES[name]
    analysis = Analyzer().analyze(f"/virtual/{abs(hash(name))}.py", source)
    lines = source.splitlines()
    outcomes = jax_outcomes[name]
    bound = _bound_lines(source)
    assert outcomes, f"JAX ran nothing of {name!r}"
    for line, (outcome, detail) in zip(bound, outcomes):
        problems = _problems_at(analysis, line)
        text = lines[line]
        if text.endswith(UNDECIDED):
            assert outcome != "ok", f"{text!r}: JAX decides it ({detail}); the test's mark is wrong"
            assert not problems, text
            continue
        if outcome == "ok":
            assert not problems, f"{text!r}: JAX runs it ({detail}), shardls reports {problems}"
            assert _type_at(analysis, line) == detail, (
                f"{text!r}: shardls {_type_at(analysis, line)}, JAX {detail}"
            )
        else:
            assert problems, f"{text!r}: JAX raises {outcome} ({detail}), shardls reports nothing"
            classes = {error for _, error, _ in problems if error is not None}
            assert not classes or outcome in classes, f"{text!r}: JAX raises {outcome}, shardls {problems}"
            assert all(severity is Severity.ERROR for *_, severity in problems), problems
    # every line JAX did not reach is past a failure: shardls typed or judged the rest alone
    assert len(outcomes) <= len(bound)


def test_a_mismatch_is_reported_on_the_argument_with_both_shardings() -> None:
    source = EXPLICIT + 'v1 = jax.jit(double, in_shardings=P("X", None))(x)\n'
    analysis = Analyzer().analyze("/virtual/mismatch.py", source)
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "SH320"]
    line = source.splitlines()[diagnostic.span.line]
    assert line[diagnostic.span.column : diagnostic.span.end_column] == "x"
    assert (
        "spec=P('X', None)" in diagnostic.message and "for arg type: float32[8@X,16@Y]" in diagnostic.message
    )
    assert diagnostic.data["jax_error"] == "ValueError"


def test_an_assumed_device_count_makes_the_mismatch_a_warning() -> None:
    header = EXPLICIT.replace("# shardls: device-count=8\n", "").replace(
        "make_mesh((2, 4)", "make_mesh((jax.device_count() // 4, 4)"
    )
    source = header + 'v1 = jax.jit(double, in_shardings=P("X", None))(x)\n'
    analysis = Analyzer().analyze("/virtual/assumed.py", source)
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "SH320"]
    assert diagnostic.severity is Severity.WARNING


def test_the_result_of_out_shardings_says_what_it_moves() -> None:
    source = EXPLICIT + "v1 = jax.jit(double, out_shardings=P())(x)\n"
    analysis = Analyzer().analyze("/virtual/moves.py", source)
    line = len(source.splitlines()) - 1
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.JIT_OUT and s.span.line == line]
    assert site.jax_type == "float32[8,16]"
    assert site.movement is not None
    # each device held a 4x4 block of the 8x16 result and must hold all of it
    assert set(site.movement.received_bytes) == {(8 * 16 - 4 * 4) * 4}


def test_a_call_that_may_be_traced_gets_no_type_from_out_shardings() -> None:
    source = (
        EXPLICIT
        + """
def helper(a):
    return jax.jit(double, in_shardings=P("X", None), out_shardings=P())(a)

@some_decorator
def unknown(a):
    return helper(a)

v1 = unknown(x)
"""
    )
    analysis = Analyzer().analyze("/virtual/unclear.py", source)
    assert not [d for d in analysis.diagnostics if d.code == "SH320"]
    assert _type_at(analysis, len(source.splitlines()) - 1) is None
