"""Types inside `shard_map` and `jax.vmap` bodies through the analyzer, judged by real JAX.

Seeded random programs written as a user writes them: an Explicit mesh under `jax.set_mesh`, an
array placed on it, a body of a few statements (elementwise operations, collectives,
`axis_index`, reductions), called through `jax.shard_map` in its call, bound, decorator,
`partial` and jitted forms (all or some axes manual), or through `jax.vmap` (called, also with a
keyword argument, `@jax.vmap` or `@partial(jax.vmap, ...)`) with `in_axes`, `out_axes` and
`spmd_axis_name`. Each body statement also appends its value to `seen`, and the
module binds `v<i> = seen[i - 1]` after the call, so that tests/core/types_source_worker.py
reports what `jax.typeof` says of each body value (a leaked tracer keeps its type) and of the
call's result `v0`, or which exception the call raises.

shardls must agree: the hover of each body statement's target and of `v0` prints as JAX
prints, and where JAX raises, shardls reports an error with JAX's exception class (on the call,
or on the collective in the body that JAX refuses), and no error anywhere else.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from body_types_support import MESHES, assert_agreement, elementwise, header, next_kind, p_text, random_spec

from shardls.analysis.analyzer import Analyzer
from shardls.core import Severity
from shardls.render.site_text import describe_site

SEED = 20261202
N_PROGRAMS = 90
FORMS = ("call", "bound", "decorator", "partial", "jit", "vmap")
VMAP_FORMS = ("call", "call", "decorator", "partial")
"""How `jax.vmap` is applied: called (twice as often), `@jax.vmap`, `@partial(jax.vmap, ...)`."""

HEADER = """\
# shardls: device-count={devices}
from functools import partial
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh({sizes!r}, {names!r}, axis_types=(AxisType.Explicit,) * {rank})
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros({shape!r}), {spec})
seen = []
"""


def _axes(rng: random.Random, manual: list[str]) -> str:
    picked = rng.sample(manual, rng.randint(1, len(manual)))
    return repr(picked[0]) if len(picked) == 1 else repr(tuple(picked))


def _body(rng: random.Random, manual: list[str], vmapped: bool) -> tuple[list[str], int]:
    """The body's statements and the rank of what it returns (from a rank-2 parameter `a`)."""
    lines = ["def body(a):"]
    previous, rank, same_shape = "a", 1 if vmapped else 2, True
    for i in range(rng.randint(1, 4)):
        kind = next_kind(
            rng, same_shape, rank, [] if vmapped else ["psum", "pmax", "pmean", "ppermute", "gather", "index"]
        )
        step = elementwise(kind, previous, rank)
        if step is not None:
            value, rank, kept = step
            same_shape = same_shape and kept
        elif kind == "ppermute":
            axis = rng.choice(manual)
            value = f"jax.lax.ppermute({previous}, {axis!r}, [(0, 1), (1, 0)])"
        elif kind == "gather":
            if rank == 0:
                value = f"{previous} * 2"
            else:
                value, same_shape = (
                    f"jax.lax.all_gather({previous}, {_axes(rng, manual)}, axis=0, tiled=True)",
                    False,
                )
        elif kind == "index" and rng.random() < 0.3:
            value, rank, same_shape = f"jax.lax.axis_index({_axes(rng, manual)})", 0, False
        elif kind == "index":
            value = f"{previous} + jax.lax.axis_index({_axes(rng, manual)}).astype(jnp.float32)"
        else:
            value = f"jax.lax.{kind}({previous}, {_axes(rng, manual)})"
        lines += [f"    b{i} = {value}", f"    seen.append(b{i})"]
        previous = f"b{i}"
    lines.append(f"    return {previous}")
    return lines, rank


def random_program(rng: random.Random) -> tuple[int, str]:
    sizes, names_tuple = rng.choice(MESHES)
    names = list(names_tuple)
    form = rng.choice(FORMS)
    shape = (8, 16)
    spec = random_spec(rng, names, 2)
    opening = header(HEADER, sizes, names_tuple, shape, spec)
    if form == "vmap":
        return math.prod(sizes), opening + _vmap_program(rng, names, spec)
    partial_manual = len(names) > 1 and rng.random() < 0.25
    manual = rng.sample(names, rng.randint(1, len(names) - 1)) if partial_manual else names
    in_spec = (
        [e if e in manual else None for e in spec] if rng.random() < 0.85 else random_spec(rng, manual, 2)
    )
    body, rank = _body(rng, manual, False)
    out_spec = random_spec(rng, manual, rank) if rng.random() < 0.5 else _covering(in_spec, rank, manual)
    options = f"mesh=mesh, in_specs={p_text(in_spec)}, out_specs={p_text(out_spec)}"
    if partial_manual:
        options += f", axis_names={set(manual)!r}"
    lines = ["", ""]
    if form == "decorator":
        lines += [f"@jax.shard_map({options})", *body, "", "", "v0 = body(x)"]
    elif form == "partial":
        lines += [f"@partial(jax.shard_map, {options})", *body, "", "", "v0 = body(x)"]
    elif form == "bound":
        lines += [*body, "", "", f"f = jax.shard_map(body, {options})", "v0 = f(x)"]
    elif form == "jit":
        lines += [*body, "", "", f"v0 = jax.jit(jax.shard_map(body, {options}))(x)"]
    else:
        lines += [*body, "", "", f"v0 = jax.shard_map(body, {options})(x)"]
    statements = sum(1 for line in body if line.startswith("    b"))
    lines += [f"v{i + 1} = seen[{i}]" for i in range(statements)]
    return math.prod(sizes), opening + "\n".join(lines) + "\n"


def _covering(in_spec: list[object], rank: int, manual: list[str]) -> list[object]:
    """An out_spec naming every manual axis (so that an output varying along them is allowed)."""
    spec = list(in_spec[:rank]) + [None] * max(0, rank - len(in_spec))
    used = {e for e in spec if e is not None}
    rest = [a for a in manual if a not in used]
    if rank and rest:
        first = spec[0]
        spec[0] = (
            tuple(([first] if first is not None else []) + rest)
            if len(rest) + (first is not None) > 1
            else rest[0]
        )
    return spec


def _vmap_program(rng: random.Random, names: list[str], spec: list[object]) -> str:
    body, rank = _body(rng, names, True)
    in_axis = rng.choice((0, 1))
    options = [f"in_axes={in_axis}", f"out_axes={rng.choice(range(-1 - rank, rank + 1))}"]
    if rng.random() < 0.5:
        split = spec[in_axis]
        spmd = split if split is not None and rng.random() < 0.6 else rng.choice(names)
        options.append(f"spmd_axis_name={spmd!r}")
    statements = sum(1 for line in body if line.startswith("    b"))
    form = rng.choice(VMAP_FORMS)
    if form == "decorator":  # `@jax.vmap` takes no options: in_axes and out_axes 0
        lines = ["", "", "@jax.vmap", *body, "", "", "v0 = body(x)"]
    elif form == "partial":
        lines = ["", "", f"@partial(jax.vmap, {', '.join(options)})", *body, "", "", "v0 = body(x)"]
    else:  # by keyword, `x` is mapped over axis 0 whatever in_axes says
        argument = "a=x" if rng.random() < 0.25 else "x"
        lines = ["", "", *body, "", "", f"v0 = jax.vmap(body, {', '.join(options)})({argument})"]
    lines += [f"v{i + 1} = seen[{i}]" for i in range(statements)]
    return "\n".join(lines) + "\n"


def test_body_types_agree_with_jax(tmp_path: Path) -> None:
    assert_agreement(random_program, SEED, N_PROGRAMS, tmp_path, lambda outcome: True)


REJECTED = """\
# shardls: device-count=8
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("X", "Y"))


def partial_sums(a):
    s = a.sum(axis=1)
    return s


y = jax.shard_map(partial_sums, mesh=mesh, in_specs=P("X", "Y"), out_specs=P("X"))(x)
"""


def test_an_output_declared_replicated_over_an_axis_it_varies_along_is_an_error() -> None:
    analysis = Analyzer().analyze("/virtual/rejected.py", REJECTED)
    found = [(d.code, d.severity, d.span.line) for d in analysis.diagnostics]
    assert found == [("SH331", Severity.ERROR, 14)], found
    inside = [s for s in analysis.names if s.span.line == 10 and s.span.column == 4]
    assert [(s.name, s.jax_type) for s in inside] == [("s", "float32[4]{V:(X,Y)}")]
    # the hover says the type is already per device (no copies over the manual axes)
    assert describe_site(inside[0])[0] == (
        "float32[4]{V:(X,Y)}  →  one device's block, inside a shard_map body (manual axes X, Y)"
    )
    assert not any(s.name == "y" and s.jax_type for s in analysis.names)
