"""Both sides of the source-program tests of types inside mapped bodies (test_manual_body_types.py,
test_nnx_vmap_types.py): the programs run under real JAX (tests/core/types_source_worker.py, one
child per device count) and through the analyzer, and the judgement of one against the other.

A program binds `v0` to the mapped call's result and `v<i>` to the value of the i-th body
statement (`    b<i-1> = ...`, leaked through a `seen` list), so that the worker reports what
`jax.typeof` says of each, or which exception the call raises.
"""

from __future__ import annotations

import collections
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import SiteKind
from shardls.core import Severity

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import fake_devices_env, run_under_jax

MESHES = [
    ((2,), ("X",)),
    ((4,), ("X",)),
    ((2, 2), ("X", "Y")),
    ((2, 4), ("X", "Y")),
    ((2, 2, 2), ("X", "Y", "Z")),
]
"""The meshes the programs place `x` on (all Explicit), as (sizes, names)."""

Outcome = list[str]
"""`["ok", "float32[8@X,16]"]`, or `[exception class, message]`."""


def p_text(entries: list[object]) -> str:
    parts = ["None" if e is None else repr(e) for e in entries]
    return f"P({', '.join(parts)})"


def random_spec(rng: random.Random, names: list[str], rank: int) -> list[object]:
    free = list(names)
    rng.shuffle(free)
    return [free.pop() if free and rng.random() < 0.6 else None for _ in range(rank)]


def header(
    template: str, sizes: tuple[int, ...], names: tuple[str, ...], shape: tuple[int, ...], spec: list[object]
) -> str:
    """A program's opening (`template` with the mesh, `x`'s shape and spec filled in), and the
    device count it needs."""
    return template.format(
        devices=math.prod(sizes), sizes=sizes, names=names, rank=len(sizes), shape=shape, spec=p_text(spec)
    )


def next_kind(rng: random.Random, same_shape: bool, rank: int, more: Sequence[str] = ()) -> str:
    """The kind of a body's next statement: `scale`, `tanh`, `sum` (over the last axis, not of a
    scalar), `add` (of the parameter `a`, while the value keeps its shape) or one of `more`."""
    kinds = ["scale", "tanh", "sum", *more] + (["add"] if same_shape else [])
    kind = rng.choice(kinds)
    return "scale" if kind == "sum" and rank == 0 else kind


def elementwise(kind: str, previous: str, rank: int) -> tuple[str, int, bool] | None:
    """A statement of one of `next_kind`'s own kinds from the value `previous` of `rank`: its
    expression, its rank, and whether it keeps the shape of `a`; None for another kind."""
    if kind == "scale":
        return f"{previous} * 2", rank, True
    if kind == "tanh":
        return f"jnp.tanh({previous})", rank, True
    if kind == "add":
        return f"{previous} + a", rank, True
    if kind == "sum":
        return f"{previous}.sum(axis=-1)", rank - 1, False
    return None


def ours(analyzer: Analyzer, path: str, source: str) -> tuple[dict[int, set[str]], list[tuple[int, str]]]:
    """The hover types by line of each body statement's target and of `v0`, and the errors."""
    analysis = analyzer.analyze(path, source)
    lines = source.splitlines()
    types: dict[int, set[str]] = collections.defaultdict(set)
    for site in analysis.names:
        if site.kind is not SiteKind.ARRAY_NAME or site.jax_type is None:
            continue
        text = lines[site.span.line]
        if (site.span.column == 4 and text.startswith("    b")) or (
            site.span.column == 0 and text.startswith("v0 ")
        ):
            types[site.span.line].add(site.jax_type)
    errors = [
        (d.span.line, str(d.data.get("jax_error", d.code)))
        for d in analysis.diagnostics
        if d.severity is Severity.ERROR
    ]
    return types, errors


def judge(
    source: str,
    theirs: list[Outcome],
    types: dict[int, set[str]],
    errors: list[tuple[int, str]],
    modelled: Callable[[Outcome], bool],
) -> str | None:
    """None when shardls agrees with JAX: every hover as `jax.typeof` prints it and no error
    where JAX accepts the program; an error of JAX's exception class where JAX raises one that
    shardls models (`modelled`); and where JAX raises one it does not (a pytree or rank error),
    no error and no type for the result."""
    lines = source.splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("v0 "))
    body_lines = [i for i, line in enumerate(lines) if line.startswith("    b")]
    if theirs[0][0] != "ok" and not modelled(theirs[0]):
        if errors or call in types:
            return f"JAX raises {theirs[0]}, shardls reports {errors} and types v0 {types.get(call)}"
        return None
    if theirs[0][0] != "ok":
        if not any(kind == theirs[0][0] for _, kind in errors):
            return f"JAX raises {theirs[0]}, shardls reports {errors}"
        return None
    if errors:
        return f"JAX accepts it, shardls reports {errors}"
    expected = {call: theirs[0][1], **{line: o[1] for line, o in zip(body_lines, theirs[1:], strict=True)}}
    for line, jax_type in expected.items():
        if types.get(line) != {jax_type}:
            return f"line {line + 1}: shardls {sorted(types.get(line, ()))}, jax {jax_type}"
    return None


def disagreements(
    programs: list[tuple[int, str]], tmp_path: Path, modelled: Callable[[Outcome], bool]
) -> tuple[list[str], collections.Counter[str]]:
    """Each (device count, source) program judged against JAX: the disagreements (the program and
    what differs), and how often JAX ended each way (`ok` or the exception class)."""
    by_devices: dict[int, list[str]] = collections.defaultdict(list)
    for devices, source in programs:
        by_devices[devices].append(source)
    analyzer = Analyzer()
    found: list[str] = []
    outcomes: collections.Counter[str] = collections.Counter()
    for devices, sources in sorted(by_devices.items()):
        results: list[list[Outcome]] = run_under_jax(sources, fake_devices_env(devices))
        for index, (source, theirs) in enumerate(zip(sources, results, strict=True)):
            outcomes[theirs[0][0]] += 1
            types, errors = ours(analyzer, str(tmp_path / f"p{devices}_{index}.py"), source)
            verdict = judge(source, theirs, types, errors, modelled)
            if verdict is not None:
                found.append(f"{source}{verdict}")
    return found, outcomes


def assert_agreement(
    generate: Callable[[random.Random], tuple[int, str]],
    seed: int,
    count: int,
    tmp_path: Path,
    modelled: Callable[[Outcome], bool],
) -> None:
    """`count` programs from `generate` (seeded) all agree with JAX, and enough of them are
    accepted (a third) and refused (a tenth, `ValueError`s) for both sides to be tested."""
    rng = random.Random(seed)
    found, outcomes = disagreements([generate(rng) for _ in range(count)], tmp_path, modelled)
    assert not found, f"{len(found)} disagreements, e.g.\n" + "\n\n".join(found[:6])
    assert outcomes["ok"] >= count // 3, outcomes
    assert outcomes["ValueError"] >= count // 10, outcomes
