"""Indexing, slicing, gather, concatenate/stack and split in the sharding-in-types core.

The cases below are the JAX 0.10 behaviours recorded by running JAX (mesh X=2, Y=4, Explicit):
each asserts the exact type JAX printed or the code and exception class of JAX's refusal. The
eager differential runs indexing of concrete arrays on 8 fake CPU devices, the path the traced
differential (test_types_differential.py) cannot reach: JAX gathers instead of slicing there.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from core_support import fake_devices_env
from core_types_support import ours_eager
from types_cases import random_eager_case

from shardls.core import AxisType, Mesh, PartitionSpec, parse_dtype
from shardls.core.typing import (
    Index,
    ShapeError,
    ShardedType,
    TypeRejected,
    array_split,
    concatenate,
    dynamic_slice,
    index,
    lax_slice,
    split,
    stack,
    take,
)

MESH = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT, AxisType.EXPLICIT))
F32 = parse_dtype("float32")
I32 = parse_dtype("int32")
X = ShardedType((8, 16), F32, MESH, (("X",), ("Y",)))
B = ShardedType((8, 16), F32, MESH, ((), ("Y",)))
R = ShardedType((8, 16), F32, MESH, ((), ()))
IDS = ShardedType((4,), I32, MESH, ((),))
IDS_X = ShardedType((4,), I32, MESH, (("X",),))
IDS_Y = ShardedType((4,), I32, MESH, (("Y",),))
SCALAR = ShardedType((), I32, MESH, ())


def _rejected(call: object) -> tuple[str, object]:
    assert callable(call)
    with pytest.raises(TypeRejected) as info:
        call()
    return info.value.problem.code, info.value.problem.data["jax_error"]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (slice(0, 4), "float32[4@X,16@Y]"),
        (slice(1, 5), "float32[4@X,16@Y]"),
        (slice(None, None, 2), "float32[4@X,16@Y]"),
        (slice(None, None, 4), "float32[2@X,16@Y]"),
        (slice(None, None, -1), "float32[8@X,16@Y]"),
        (None, "float32[1,8@X,16@Y]"),
        ((Ellipsis, None), "float32[8@X,16@Y,1]"),
        (Ellipsis, "float32[8@X,16@Y]"),
        ((slice(None), slice(0, 8)), "float32[8@X,8@Y]"),
        (slice(0, 100), "float32[8@X,16@Y]"),
        (slice(5, 2), "float32[0@X,16@Y]"),
    ],
)
def test_traced_static_slices_keep_the_sharding(where: object, expected: str) -> None:
    assert index(X, where).jax_type == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (0, "slicing on sharded dims where out dim (1) is not divisible by mesh axes (2) with spec (X)"),
        (-1, "slicing on sharded dims where out dim (1)"),
        (slice(0, 3), "out dim (3) is not divisible by mesh axes (2)"),
        ((slice(None), 0), "out dim (1) is not divisible by mesh axes (4) with spec (Y)"),
        ((slice(None), slice(0, 6)), "out dim (6) is not divisible by mesh axes (4)"),
        (9, "dynamic_slice on sharded dims where out dim (1)"),
        (SCALAR, "dynamic_slice on sharded dims where out dim (1)"),
    ],
)
def test_traced_partial_slice_of_a_sharded_dim_is_refused(where: object, message: str) -> None:
    with pytest.raises(TypeRejected) as info:
        index(X, where)  # type: ignore[arg-type]
    assert info.value.problem.code == "SH308"
    assert info.value.problem.data["jax_error"] == "ShardingTypeError"
    assert message in info.value.problem.message
    assert "Got input type=f32[8@X,16@Y]" in info.value.problem.message


def test_unsharded_dims_index_freely() -> None:
    assert index(B, 0).jax_type == "float32[16@Y]"
    assert index(B, 3).jax_type == "float32[16@Y]"
    assert index(B, SCALAR).jax_type == "float32[16@Y]"
    assert index(B, IDS).jax_type == "float32[4,16@Y]"


def test_gather_rules() -> None:
    refused: list[tuple[ShardedType, Index]] = [(X, IDS), (X, (slice(None), IDS)), (B, (IDS, 0))]
    for array, where in refused:
        with pytest.raises(TypeRejected) as info:
            index(array, where)
        assert info.value.problem.code == "SH308"
        assert "Use `.at[...].get(out_sharding=)`" in info.value.problem.message
    assert _rejected(lambda: index(B, IDS_X)) == ("SH308", "ShardingTypeError")
    assert _rejected(lambda: index(R, IDS_X)) == ("SH308", "ShardingTypeError")
    # The expected slice sharding P('Y', 'Y') is built before the gather.
    assert _rejected(lambda: index(B, IDS_Y)) == ("SH308", "DuplicateSpecError")
    # A strided slice beside a traced index is a gather, which cannot split a sharded dim.
    c = ShardedType((8, 16), F32, MESH, (("X",), ()))
    assert _rejected(lambda: index(c, (slice(None, None, 2), SCALAR))) == ("SH308", "ShardingTypeError")
    assert index(c, (slice(1, 5), slice(None, None, 2))).jax_type == "float32[4@X,8]"
    assert index(c, (slice(0, 4), SCALAR)).jax_type == "float32[4@X]"


def test_gather_message_quotes_operand_and_indices() -> None:
    with pytest.raises(TypeRejected) as info:
        index(R, IDS_X)
    assert info.value.problem.message.endswith(
        "Got operand=ShapedArray(float32[8,16]), indices=ShapedArray(int32[4@X,1])"
    )


def test_advanced_indices_apart_go_first() -> None:
    three = ShardedType((8, 4, 8), F32, MESH, ((), ("Y",), ()))
    ids3 = ShardedType((3,), I32, MESH, ((),))
    assert index(three, (ids3, slice(None), ids3)).jax_type == "float32[3,4@Y]"
    assert index(three, (0, Ellipsis, ids3)).jax_type == "float32[3,4@Y]"
    other = ShardedType((8, 4, 8), F32, MESH, (("X",), (), ("Y",)))
    assert index(other, (slice(None), ids3, None)).jax_type == "float32[8@X,3,1,8@Y]"
    ids2d = ShardedType((3, 2), I32, MESH, ((), ()))
    b4 = ShardedType((8, 4), F32, MESH, ((), ("Y",)))
    assert index(b4, (None, ids2d)).jax_type == "float32[1,3,2,4@Y]"
    assert index(b4, (ids2d, None)).jax_type == "float32[3,2,1,4@Y]"


def test_bad_indices_are_shape_errors() -> None:
    with pytest.raises(ShapeError) as info:
        index(B, (0, 0, 0))
    assert info.value.jax_error == "IndexError"
    with pytest.raises(ShapeError) as info:
        index(B, ShardedType((4,), F32, MESH, ((),)))
    assert info.value.jax_error == "TypeError"
    assert _rejected(lambda: index(B, ShardedType((8,), parse_dtype("bool"), MESH, ((),)))) == (
        "SH315",
        "NonConcreteBooleanIndexError",
    )


def test_eager_indexing_gathers() -> None:
    with pytest.raises(TypeRejected) as info:
        index(X, slice(0, 4), concrete=True)
    assert "Use `.at[...].get(out_sharding=)`" in info.value.problem.message
    assert index(B, 0, concrete=True).jax_type == "float32[16@Y]"
    assert index(B, slice(0, 4), concrete=True).jax_type == "float32[4,16@Y]"
    assert index(R, slice(0, 3), concrete=True).jax_type == "float32[3,16]"
    assert index(X, slice(None, None, -1), concrete=True).jax_type == "float32[8@X,16@Y]"
    assert _rejected(lambda: index(B, (slice(None), slice(0, 8)), concrete=True))[0] == "SH308"


def test_out_sharding_helps_the_gather_only() -> None:
    spec = PartitionSpec.of(None, "Y")
    assert index(X, IDS, out_sharding=spec).jax_type == "float32[4,16@Y]"
    assert index(X, slice(0, 4), concrete=True, out_sharding=spec).jax_type == "float32[4,16@Y]"
    # Traced, a static index is a slice, which ignores out_sharding.
    assert _rejected(lambda: index(X, slice(0, 3), out_sharding=spec))[0] == "SH308"
    three = ShardedType((3,), I32, MESH, ((),))
    assert _rejected(lambda: index(X, three, out_sharding=PartitionSpec.of("X", "Y"))) == (
        "SH001",
        "ValueError",
    )


def test_lax_slices() -> None:
    assert lax_slice(X, (0, 0), (4, 8)).jax_type == "float32[4@X,8@Y]"
    assert lax_slice(X, (0, 0), (8, 16), (2, 1)).jax_type == "float32[4@X,16@Y]"
    assert _rejected(lambda: lax_slice(X, (0, 0), (3, 8)))[0] == "SH308"
    assert _rejected(lambda: lax_slice(X, (1, 0), (8, 16), (3, 1)))[0] == "SH308"
    with pytest.raises(ShapeError):
        lax_slice(X, (0, 0), (9, 16))
    unreduced = ShardedType((8,), F32, MESH, ((),), frozenset({"X"}))
    assert lax_slice(unreduced, (0,), (4,)).jax_type == "float32[4]{U:X}"
    assert dynamic_slice(X, (4, 8)).jax_type == "float32[4@X,8@Y]"
    assert _rejected(lambda: dynamic_slice(X, (1, 8)))[0] == "SH308"
    assert _rejected(lambda: dynamic_slice(unreduced, (4,))) == ("SH312", "NotImplementedError")


def test_concatenate_and_stack() -> None:
    assert concatenate([X, X], 0).jax_type == "float32[16@X,16@Y]"
    assert concatenate([X, X], -1).jax_type == "float32[8@X,32@Y]"
    assert concatenate([X, ShardedType((6, 16), F32, MESH, X.spec)]).jax_type == "float32[14@X,16@Y]"
    assert concatenate([X, ShardedType((8, 16), I32, MESH, X.spec)]).jax_type == "float32[16@X,16@Y]"
    assert concatenate([X, X], None).jax_type == "float32[256@(X,Y)]"
    with pytest.raises(TypeRejected) as info:
        concatenate([X, B])
    assert info.value.problem.code == "SH307"
    assert info.value.problem.message == (
        "All operands should have the same sharding. Got shardings "
        "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit)), spec=P('X', 'Y')), "
        "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit)), spec=P(None, 'Y'))"
    )
    unreduced = ShardedType((8,), F32, MESH, ((),), frozenset({"X"}))
    assert concatenate([unreduced, unreduced]).jax_type == "float32[16]{U:X}"
    with pytest.raises(TypeRejected) as info:
        concatenate([unreduced, ShardedType((8,), F32, MESH, ((),))])
    assert "spec=P(None, unreduced={'X'})" in info.value.problem.message
    assert "spec=P(None,)" in info.value.problem.message
    assert stack([X, X]).jax_type == "float32[2,8@X,16@Y]"
    assert stack([X, X, X], 1).jax_type == "float32[8@X,3,16@Y]"
    assert stack([X, X], -1).jax_type == "float32[8@X,16@Y,2]"
    assert _rejected(lambda: stack([X, B]))[0] == "SH307"
    with pytest.raises(ShapeError) as shape_info:
        stack([X, ShardedType((8, 8), F32, MESH, X.spec)])
    assert shape_info.value.jax_error == "ValueError"


def test_split() -> None:
    assert [t.jax_type for t in split(X, 2)] == ["float32[4@X,16@Y]"] * 2
    assert [t.jax_type for t in split(X, [2])] == ["float32[2@X,16@Y]", "float32[6@X,16@Y]"]
    assert [t.jax_type for t in array_split(R, 3, 1)] == ["float32[8,6]", "float32[8,5]", "float32[8,5]"]
    assert _rejected(lambda: split(X, 8))[0] == "SH308"
    assert _rejected(lambda: array_split(X, 3))[0] == "SH308"
    with pytest.raises(ShapeError) as info:
        split(X, 3)
    assert info.value.jax_error == "ValueError"


EAGER_SEED = 20261202
EAGER_CASES = 120


def test_eager_indexing_agrees_with_jax_on_concrete_arrays() -> None:
    """Random indexings of concrete sharded arrays, run by JAX on 8 fake CPU devices in a child
    process (the device count must be set before jax is imported)."""
    rng = random.Random(EAGER_SEED)
    cases = [random_eager_case(rng) for _ in range(EAGER_CASES)]
    here = Path(__file__).parent
    env = fake_devices_env(8)
    child = subprocess.run(
        [sys.executable, "-c", "from core_types_support import eager_worker; eager_worker()"],
        input="".join(json.dumps(c) + "\n" for c in cases),
        capture_output=True,
        text=True,
        cwd=here,
        env={**env, "PYTHONPATH": os.pathsep.join([str(here), env.get("PYTHONPATH", "")])},
        timeout=600,
        check=True,
    )
    theirs = [tuple(json.loads(line)) for line in child.stdout.splitlines()]
    assert len(theirs) == len(cases), child.stderr[-2000:]
    disagreements = []
    outcomes: dict[str, int] = {}
    for case, (kind, detail) in zip(cases, theirs, strict=True):
        mine = ours_eager(case)
        outcomes[kind] = outcomes.get(kind, 0) + 1
        if mine[0] != kind or (kind == "ok" and mine[1] != detail):
            disagreements.append(f"{case}\n  shardls {mine}\n  jax     {(kind, detail)}")
    assert not disagreements, f"{len(disagreements)} disagreements, e.g.\n" + "\n".join(disagreements[:10])
    assert outcomes.get("ok", 0) >= EAGER_CASES // 3, outcomes
    assert outcomes.get("ShardingTypeError", 0) >= EAGER_CASES // 10, outcomes


def test_take_is_always_a_gather() -> None:
    c = ShardedType((8, 16), F32, MESH, (("X",), ()))
    assert take(B, IDS, 0).jax_type == "float32[4,16@Y]"
    assert take(c, IDS, 1).jax_type == "float32[8@X,4]"
    assert take(c, ShardedType((4, 3), I32, MESH, ((), ())), 1).jax_type == "float32[8@X,4,3]"
    assert take(B, SCALAR, 0).jax_type == "float32[16@Y]"
    assert take(R, IDS).jax_type == "float32[4]"
    for array, where, axis in ((B, IDS_X, 0), (X, IDS, 0), (B, IDS, -1), (c, IDS_Y, 1)):
        with pytest.raises(TypeRejected) as info:
            take(array, where, axis)
        assert (info.value.problem.code, info.value.problem.data["jax_error"]) == (
            "SH308",
            "ShardingTypeError",
        )
    # axis=None flattens first, which a sharded array cannot do without out_sharding.
    assert _rejected(lambda: take(B, IDS)) == ("SH305", "ShardingTypeError")
