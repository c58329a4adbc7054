"""Types through Flax NNX's `nnx.vmap` over functions of arrays, judged by real Flax and JAX.

Seeded random programs as a user writes them: an Explicit mesh under `jax.set_mesh`, an array
`x` placed on it (a dimension sometimes split over two axes), maybe a second array `y`, and a
body of a few statements called through `nnx.vmap` in every form: the call, a bound name,
`@nnx.vmap`, `@nnx.vmap(...)`, `@partial(nnx.vmap, ...)` and `jax.jit(nnx.vmap(...))`. The
options vary as Flax allows them: `in_axes` an int, a tuple (with None), negative, or a list
(which Flax refuses); `out_axes`, for a body returning a tuple also a tuple; `spmd_axis_name` a
name or a tuple, matching the split or not; `graph=False`; the second argument passed by
keyword, or a parameter left to its default (which Flax maps too). The programs run under Flax
0.12 (body_types_support.py); shardls must give each body statement's target and the result `v0`
the type `jax.typeof` prints, report the vmap refusals (SH333-SH335) and the body's
`ShardingTypeError`s with JAX's exception class where they are raised, and where Flax raises an
error it does not model (a pytree prefix, a rank, a `TypeError`), report nothing and leave `v0`
untyped.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from body_types_support import (
    MESHES,
    Outcome,
    assert_agreement,
    elementwise,
    header,
    next_kind,
    p_text,
    random_spec,
)

from shardls.analysis.analyzer import Analyzer
from shardls.core import Severity

SEED = 20261203
N_PROGRAMS = 96
FORMS = ("call", "bound", "decorator", "partial", "jit")
SECOND = (None, "mapped", "unmapped", "default_none", "default_float")
SHAPE = (8, 16)

HEADER = """\
# shardls: device-count={devices}
from functools import partial
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh({sizes!r}, {names!r}, axis_types=(AxisType.Explicit,) * {rank})
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros({shape!r}), {spec})
seen = []
"""

MODELLED = (
    "Mapped away dimension of inputs",
    "Unmapped values passed to vmap",
    "Only one of spmd_axis_name",
)
"""The openings of the vmap refusals shardls reports (SH333-SH335)."""


def modelled(outcome: Outcome) -> bool:
    """Whether shardls reports this error of Flax/JAX: a `ShardingTypeError`, or a vmap refusal."""
    kind, message = outcome
    return kind == "ShardingTypeError" or message.startswith(MODELLED)


def _spec(rng: random.Random, names: list[str]) -> list[object]:
    """A spec for `x`, sometimes splitting a dimension over two axes (`P(('X', 'Y'), None)`)."""
    if len(names) > 1 and rng.random() < 0.2:
        pair = tuple(rng.sample(names, 2))
        return [pair, None] if rng.random() < 0.5 else [None, pair]
    return random_spec(rng, names, 2)


def _body(rng: random.Random, parameters: str, uses: str | None, rank: int) -> tuple[list[str], int]:
    """The body's statements and the rank of what it returns (from its element `a` of `rank`);
    `uses` is the second parameter's term in the first statement (`a + c`, `a * s`). A `dot`
    of two vectors (`b @ a`) contracts a dimension that may be split: SH301 in the body."""
    lines = [f"def body({parameters}):"]
    previous, same_shape = "a", True
    for i in range(rng.randint(1, 3)):
        if i == 0 and uses is not None:
            value = f"{previous} {uses}"
        else:
            kind = next_kind(rng, same_shape, rank, ["dot"] if same_shape and rank == 1 else [])
            step = elementwise(kind, previous, rank) or (f"{previous} @ a", 0, False)
            value, rank, kept = step
            same_shape = same_shape and kept
        lines += [f"    b{i} = {value}", f"    seen.append(b{i})"]
        previous = f"b{i}"
    lines.append(f"    return {previous}")
    return lines, rank


def _axes_text(axes: list[int | None], as_list: bool) -> str:
    text = ", ".join("None" if a is None else str(a) for a in axes)
    return f"[{text}]" if as_list else f"({text}{',' if len(axes) == 1 else ''})"


def _out_axes(rng: random.Random, ranks: list[int]) -> str:
    """An `out_axes` in range for outputs of these ranks (with the mapped dimension back): one int
    for all, or for several outputs sometimes a tuple of one each."""
    if len(ranks) > 1 and rng.random() < 0.5:
        return f"({', '.join(str(rng.choice(range(-1 - r, r + 1))) for r in ranks)})"
    return str(rng.choice(range(-1 - min(ranks), min(ranks) + 1)))


def _applied(form: str, body: list[str], options: list[str], call: str) -> list[str]:
    """The body under `nnx.vmap` in one of FORMS, and `v0` bound to `body` + `call`."""
    written = ", ".join(options)
    with_options = f", {written}" if options else ""
    if form == "decorator":
        return ["", f"@nnx.vmap({written})" if options else "@nnx.vmap", *body, "", "", f"v0 = body{call}"]
    if form == "partial":
        return ["", f"@partial(nnx.vmap{with_options})", *body, "", "", f"v0 = body{call}"]
    if form == "bound":
        return ["", *body, "", "", f"f = nnx.vmap(body{with_options})", f"v0 = f{call}"]
    if form == "jit":
        return ["", *body, "", "", f"v0 = jax.jit(nnx.vmap(body{with_options})){call}"]
    return ["", *body, "", "", f"v0 = nnx.vmap(body{with_options}){call}"]


def random_program(rng: random.Random) -> tuple[int, str]:
    sizes, names_tuple = rng.choice(MESHES)
    names = list(names_tuple)
    spec = _spec(rng, names)
    in_axis = rng.choice((0, 1, -1, -2))
    element = (SHAPE[1],) if in_axis % 2 == 0 else (SHAPE[0],)
    second = rng.choice(SECOND)
    lines = [""]
    axes: list[int | None] = [in_axis]
    parameters, uses, arguments = "a", None, "x"
    if second == "mapped":
        other = rng.choice((in_axis % 2, in_axis % 2 - 2))
        lines.append(f"y = jax.device_put(jnp.zeros({SHAPE!r}), {p_text(random_spec(rng, names, 2))})")
        parameters, uses, axes = "a, c", "+ c", [in_axis, other]
    elif second == "unmapped":
        lines.append(f"y = jax.device_put(jnp.zeros({element!r}), {p_text(random_spec(rng, names, 1))})")
        parameters, uses, axes = "a, c", "* c", [in_axis, None]
    elif second == "default_none":
        parameters, axes = "a, c=None", [in_axis, rng.choice((None, 0))]
    elif second == "default_float":
        parameters, uses, axes = "a, s=2.0", "* s", [in_axis, None]
    if second in ("mapped", "unmapped"):
        arguments = "x, c=y" if rng.random() < 0.3 else "x, y"
    options = []
    single = len(set(axes)) == 1 or (second == "default_float" and rng.random() < 0.4)
    if not (single and in_axis == 0 and rng.random() < 0.4):
        as_int = single and rng.random() < 0.6
        options.append(f"in_axes={in_axis}" if as_int else f"in_axes={_axes_text(axes, rng.random() < 0.1)}")
    body, rank = _body(rng, parameters, uses, 1)
    ranks, pick = [rank], ""
    if rng.random() < 0.25:  # a tuple of outputs, the result's element `pick` judged
        body[-1] += ", a"
        ranks, pick = [rank, 1], f"[{rng.choice((0, 1))}]"
    if rng.random() < 0.6:
        options.append(f"out_axes={_out_axes(rng, ranks)}")
    if rng.random() < 0.5:
        split = spec[in_axis % 2]
        spmd = split if split is not None and rng.random() < 0.6 else rng.choice([*names, tuple(names)])
        options.append(f"spmd_axis_name={spmd!r}")
    form = rng.choice(FORMS)
    if rng.random() < 0.1 and form != "jit":
        options.append("graph=False")
    lines += _applied(form, body, options, f"({arguments}){pick}")
    statements = sum(1 for line in body if line.startswith("    b"))
    lines += [f"v{i + 1} = seen[{i}]" for i in range(statements)]
    return math.prod(sizes), header(HEADER, sizes, names_tuple, SHAPE, spec) + "\n".join(lines) + "\n"


def test_nnx_vmap_types_agree_with_flax(tmp_path: Path) -> None:
    assert_agreement(random_program, SEED, N_PROGRAMS, tmp_path, modelled)


REFUSED_BEFORE_TRACING = """\
# shardls: device-count=8
from functools import partial
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros((8, 16)), P("X", None))
y = jax.device_put(jnp.zeros((16,)), P("X"))


@partial(nnx.vmap, in_axes=[0, None])
def body(a, c):
    b0 = a * c
    return b0


v0 = body(x, y)
"""


def test_a_decorated_vmap_body_never_runs_on_the_whole_arrays() -> None:
    """Flax refuses the `in_axes` list before tracing (a pytree `ValueError`), so nothing in the
    body is an error; on the whole arrays `x * y` would be (`f32[8@X,16] * f32[16@X]`)."""
    analysis = Analyzer().analyze("/virtual/refused.py", REFUSED_BEFORE_TRACING)
    assert [d.code for d in analysis.diagnostics if d.severity is Severity.ERROR] == []
    assert not any(s.name == "v0" and s.jax_type for s in analysis.names)


TWICE = """\
# shardls: device-count=8
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros((4, 8, 16)), P(None, "X", "Y"))


@nnx.vmap
@nnx.vmap
def twice(a):
    t0 = a * 2
    return t0


v0 = twice(x)
"""


def test_a_body_under_two_vmaps_is_not_typed_as_under_one() -> None:
    """Flax traces `twice` with `float32[16@Y]` (both leading dimensions mapped); one level read
    would say `float32[8@X,16@Y]`. shardls reads one vmap per function, so it types neither the
    statement in the body nor the call. (The read of `t0` in `return t0` still shows the whole
    array's type until the evaluator hook: test_a_decorated_vmap_body_never_runs_on_the_whole_arrays.)"""
    analysis = Analyzer().analyze("/virtual/twice.py", TWICE)
    lines = TWICE.splitlines()
    typed = {
        (s.name, s.jax_type)
        for s in analysis.names
        if s.jax_type and lines[s.span.line].startswith(("    t0 =", "v0 =")) and s.span.column in (0, 4)
    }
    assert typed == set(), typed
