"""`jax.nn` activations and softmax in the sharding-in-types core: the JAX 0.10 behaviours
recorded by running JAX (mesh X=2, Y=4, Explicit; operand f32/i32/bool[8@X,16@Y]). The random
differential (test_types_differential.py) covers them on unreduced-free operands; the unreduced
and reduced cases, which it does not generate, are pinned here."""

from __future__ import annotations

import pytest

from shardls.core import AxisType, Mesh, parse_dtype
from shardls.core.typing import ACTIVATIONS, ShapeError, ShardedType, TypeRejected, activation

MESH = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT, AxisType.EXPLICIT))
SPEC = (("X",), ("Y",))


def _typed(dtype: str) -> ShardedType:
    return ShardedType((8, 16), parse_dtype(dtype), MESH, SPEC)


def _outcome(name: str, x: ShardedType) -> str:
    try:
        return activation(name, x).jax_type
    except TypeRejected as rejected:
        return f"{rejected.problem.data['jax_error']} {rejected.problem.code}"
    except ShapeError as error:
        return error.jax_error


# name: (float32, bfloat16, int32, bool), as JAX printed them.
EXPECTED = {
    "gelu": ("float32", "bfloat16", "float32", "float32"),
    "silu": ("float32", "bfloat16", "TypeError", "TypeError"),
    "swish": ("float32", "bfloat16", "TypeError", "TypeError"),
    "softplus": ("float32", "bfloat16", "float32", "~float32"),
    "log_sigmoid": ("float32", "bfloat16", "float32", "TypeError"),
    "mish": ("float32", "bfloat16", "float32", "~float32"),
    "elu": ("float32", "bfloat16", "~float32", "~float32"),
    "leaky_relu": ("float32", "bfloat16", "~float32", "~float32"),
    "relu6": ("float32", "bfloat16", "~float32", "~float32"),
    "celu": ("float32", "bfloat16", "~float32", "~float32"),
    "selu": ("float32", "bfloat16", "~float32", "~float32"),
    "hard_tanh": ("float32", "bfloat16", "int32", "~int32"),
    "softmax": ("float32", "bfloat16", "float32", "TypeError"),
    "log_softmax": ("float32", "bfloat16", "float32", "TypeError"),
}


def test_every_activation_is_tabled() -> None:
    assert set(EXPECTED) == set(ACTIVATIONS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_activations_keep_the_sharding_and_promote_like_jax(name: str) -> None:
    for dtype, expected in zip(("float32", "bfloat16", "int32", "bool"), EXPECTED[name], strict=True):
        got = _outcome(name, _typed(dtype))
        assert got == (expected if expected.endswith("Error") else f"{expected}[8@X,16@Y]"), (name, dtype)


def test_softmax_over_a_sharded_axis_is_fine() -> None:
    x = _typed("float32")
    assert activation("softmax", x, 0).jax_type == "float32[8@X,16@Y]"
    assert activation("log_softmax", x, None).jax_type == "float32[8@X,16@Y]"
    assert activation("softmax", x, (0, 1)).jax_type == "float32[8@X,16@Y]"
    with pytest.raises(ShapeError):
        activation("softmax", x, 2)


# name: (unreduced over Y, reduced over Y) of f32[8@X,16].
UNREDUCED_REDUCED = {
    "gelu": ("NotImplementedError SH312", "NotImplementedError SH312"),
    "silu": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "softplus": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "elu": ("NotImplementedError SH312", "ValueError"),
    "leaky_relu": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "relu6": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "log_sigmoid": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "hard_tanh": ("NotImplementedError SH312", "ValueError"),
    "mish": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "celu": ("NotImplementedError SH312", "float32[8@X,16]{R:Y}"),
    "selu": ("NotImplementedError SH312", "ValueError"),
    "softmax": ("ValueError", "ValueError"),
    "log_softmax": ("ValueError", "ValueError"),
}


@pytest.mark.parametrize("name", sorted(UNREDUCED_REDUCED))
def test_unreduced_and_reduced_operands(name: str) -> None:
    f32 = parse_dtype("float32")
    unreduced = ShardedType((8, 16), f32, MESH, (("X",), ()), unreduced=frozenset({"Y"}))
    reduced = ShardedType((8, 16), f32, MESH, (("X",), ()), reduced=frozenset({"Y"}))
    assert (_outcome(name, unreduced), _outcome(name, reduced)) == UNREDUCED_REDUCED[name]


def test_weak_float_operands() -> None:
    """`x + 1.0` of an int array is `~float32`: gelu and softmax return a strong float32, the
    others keep the weak type."""
    weak = ShardedType((8, 16), parse_dtype("float32"), MESH, SPEC, weak_type=True)
    for name in ACTIVATIONS:
        strong = name in ("gelu", "softmax", "log_softmax")
        assert activation(name, weak).jax_type == ("" if strong else "~") + "float32[8@X,16@Y]", name


def test_weak_integer_operands_become_weak_floats() -> None:
    """`relu(x > 0.5)` is `~int32`; promoting it keeps the weak type, except where the result is
    never weak (gelu, softmax) or the dtype is refused (silu)."""
    weak = ShardedType((8, 1), parse_dtype("int32"), MESH, ((), ()), weak_type=True)
    expected = {"gelu": "float32", "softmax": "float32", "log_softmax": "float32", "hard_tanh": "~int32"}
    for name in ACTIVATIONS:
        if name in ("silu", "swish"):
            continue
        assert activation(name, weak).jax_type == expected.get(name, "~float32") + "[8,1]", name
