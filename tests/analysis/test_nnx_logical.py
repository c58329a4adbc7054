"""Logical axis rules, NNX (dict, merged, pass-through) and Linen (in order, first free mesh axes).

Flax is the judge: random rules and specs are translated by `flax.core.spmd.apply_rules` (what
NNX eager sharding calls) and `flax.linen.logical_to_mesh_axes` in a subprocess, and
`shardls.analysis.logical` must give the same specs and raise the same conflicts.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from shardls.analysis.logical import Rules, linen_translate, nnx_translate, read_rules
from shardls.analysis.values import Const, Seq, Value
from shardls.core import PartitionSpec

LOGICAL = ("embed", "mlp", "heads", "vocab")
MESH = ("data", "model")
TARGETS: tuple[Any, ...] = (None, "data", "model", ("data", "model"), ["model"], ("model",), [])

FLAX_SIDE = textwrap.dedent(
    """
    import json, sys
    import flax.linen as nn
    from flax.core import spmd

    def entries(spec):
        out = []
        for e in spec:
            if isinstance(e, (tuple, list)):
                e = list(e)
                e = None if not e else e[0] if len(e) == 1 else e
            out.append(e)
        return out

    def decoded(obj):
        # JSON has no tuples: they come as {"tuple": [...]} (Flax tells a tuple from a list).
        if isinstance(obj, dict) and set(obj) == {"tuple"}:
            return tuple(decoded(item) for item in obj["tuple"])
        if isinstance(obj, dict):
            return {key: decoded(item) for key, item in obj.items()}
        if isinstance(obj, list):
            return [decoded(item) for item in obj]
        return obj

    results = []
    for case in decoded(json.load(sys.stdin)):
        spec = tuple(tuple(e) if isinstance(e, list) else e for e in case["spec"])
        try:
            if case["kind"] == "nnx":
                with spmd.logical_axis_rules(case["context"]):
                    results.append({"spec": entries(spmd.apply_rules(spec, case["local"]))})
            else:
                results.append({"spec": entries(nn.logical_to_mesh_axes(spec, case["rules"]))})
        except ValueError as error:
            results.append({"error": str(error)})
    json.dump(results, sys.stdout)
    """
)


def value(obj: Any) -> Value:
    """A Python literal as the interpreter would read it from source."""
    if isinstance(obj, (tuple, list)):
        return Seq(tuple(value(item) for item in obj), is_list=isinstance(obj, list))
    return Const(obj)


def rules(pairs: list[Any], source: str = "rules") -> Rules | None:
    return read_rules(value([tuple(p) for p in pairs]), source)


def spec(entries: list[Any]) -> PartitionSpec:
    return PartitionSpec.of(*(tuple(e) if isinstance(e, list) else e for e in entries))


def random_rules(rng: random.Random, names: tuple[str, ...]) -> list[Any]:
    return [(rng.choice(names), rng.choice(TARGETS)) for _ in range(rng.randrange(0, 5))]


def random_spec(rng: random.Random, unique: bool) -> list[Any]:
    pool = list(LOGICAL + MESH)
    rng.shuffle(pool)
    chosen: list[Any] = []
    for _ in range(rng.randrange(1, 4)):
        kind = rng.random()
        if kind < 0.2:
            chosen.append(None)
        elif kind < 0.3 and not unique:
            chosen.append([rng.choice(LOGICAL), rng.choice(MESH)])
        else:
            chosen.append(pool.pop() if unique else rng.choice(pool))
    return chosen


def cases() -> list[dict[str, Any]]:
    rng = random.Random(20240501)
    found: list[dict[str, Any]] = []
    for _ in range(300):
        found.append(
            {
                "kind": "nnx",
                "spec": random_spec(rng, unique=False),
                "context": random_rules(rng, LOGICAL),
                "local": random_rules(rng, LOGICAL) if rng.random() < 0.5 else None,
            }
        )
        found.append(
            {"kind": "linen", "spec": random_spec(rng, unique=True), "rules": random_rules(rng, LOGICAL)}
        )
    return found


def encoded(obj: Any) -> Any:
    if isinstance(obj, tuple):
        return {"tuple": [encoded(item) for item in obj]}
    if isinstance(obj, list):
        return [encoded(item) for item in obj]
    if isinstance(obj, dict):
        return {key: encoded(item) for key, item in obj.items()}
    return obj


@pytest.fixture(scope="module")
def flax_verdicts() -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-c", FLAX_SIDE],
        input=json.dumps(encoded(cases())),
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
        check=True,
    )
    verdicts: list[dict[str, Any]] = json.loads(proc.stdout)
    return verdicts


def test_translations_match_flax(flax_verdicts: list[dict[str, Any]]) -> None:
    checked = {"spec": 0, "error": 0}
    for case, verdict in zip(cases(), flax_verdicts):
        if case["kind"] == "nnx":
            ours = nnx_translate(
                spec(case["spec"]),
                rules(case["context"], "context"),
                rules(case["local"] or [], "local"),
                None,
            )
        else:
            ours = linen_translate(spec(case["spec"]), rules(case["rules"]) or Rules((), "none"))
        if "error" in verdict:
            assert ours.failed, (case, verdict)
            assert ours.problems[0][1].message.startswith(verdict["error"]), (case, verdict)
            checked["error"] += 1
        else:
            assert not ours.failed, (case, verdict, ours)
            assert ours.spec.to_json() == verdict["spec"], (case, verdict, ours.spec)
            checked["spec"] += 1
    assert checked["spec"] > 300 and checked["error"] > 10, checked


def test_nnx_passes_unmapped_names_through_and_reports_them() -> None:
    result = nnx_translate(spec(["embed", "data", "hidden"]), rules([("embed", "model")]), None, MESH)
    assert result.spec == PartitionSpec.of("model", "data", "hidden")
    assert result.unmapped == {"hidden"}
    ((index, problem),) = result.problems
    assert (index, problem.code) == (2, "SH205")


def test_nnx_without_rules_changes_nothing() -> None:
    result = nnx_translate(spec(["embed"]), None, rules([]), MESH)
    assert result.spec == PartitionSpec.of("embed") and result.logical is None and not result.problems


def test_nnx_renames_only_whole_entries() -> None:
    result = nnx_translate(spec([["embed", "mlp"], None]), rules([("embed", "data")]), None, MESH)
    assert result.spec == PartitionSpec.of(("embed", "mlp"), None)
    assert "renames only whole entries" in result.problems[0][1].message


def test_nnx_conflict_names_both_sources() -> None:
    result = nnx_translate(
        spec(["embed"]),
        rules([("embed", "model")], "the context"),
        rules([("embed", "data")], "the variable"),
        MESH,
    )
    assert result.failed
    message = result.problems[0][1].message
    assert message.startswith("Inconsistent logical axis annotations for embed: model vs data")
    assert "the context" in message and "the variable" in message


def test_unreadable_rules_leave_logical_entries_unknown() -> None:
    unreadable = read_rules(Seq((Const("embed"),)), "rules")
    assert unreadable is not None and not unreadable.readable
    result = nnx_translate(spec(["embed", "model"]), unreadable, None, MESH)
    assert (
        result.unresolved == (0,) and result.spec == PartitionSpec.of(None, "model") and not result.problems
    )


def test_linen_skips_rules_whose_mesh_axes_are_taken() -> None:
    table = rules([("embed", "model"), ("mlp", "model"), ("mlp", "data")])
    assert table is not None
    result = linen_translate(spec(["embed", "mlp"]), table)
    assert result.spec == PartitionSpec.of("model", "data")
    assert any("model already used" in step for step in result.chain)
    assert linen_translate(spec(["vocab"]), table).spec == PartitionSpec.of(None)
