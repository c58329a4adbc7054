"""The shapes of array arithmetic inside jitted/shard_mapped bodies (shardls/analysis/shapes.py),
judged by numpy: broadcasting and matmul must give numpy's shape, or fail where numpy fails."""

from __future__ import annotations

import ast

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from shardls.analysis.shapes import array_operation
from shardls.analysis.values import ArrayV, Const, Unknown, Value

dims = st.lists(st.sampled_from([1, 2, 3, 4]), min_size=0, max_size=4)


def array(shape: list[int]) -> ArrayV:
    return ArrayV(tuple(Const(n) for n in shape))


def shape_of(value: Value) -> tuple[int, ...] | None:
    if not isinstance(value, ArrayV) or value.shape is None:
        return None
    return tuple(d.value for d in value.shape if isinstance(d, Const) and isinstance(d.value, int))


def numpy_shape(op: type[ast.operator], a: list[int], b: list[int]) -> tuple[int, ...] | None:
    left, right = np.zeros(a), np.zeros(b)
    try:
        return tuple((left @ right if op is ast.MatMult else left + right).shape)
    except ValueError:
        return None


@given(dims, dims)
def test_elementwise_broadcasts_like_numpy(a: list[int], b: list[int]) -> None:
    assert shape_of(array_operation(ast.Add, array(a), array(b))) == numpy_shape(ast.Add, a, b)


@given(
    st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=4),
    st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=4),
)
def test_matmul_like_numpy(a: list[int], b: list[int]) -> None:
    assert shape_of(array_operation(ast.MatMult, array(a), array(b))) == numpy_shape(ast.MatMult, a, b)


def test_numbers_keep_the_array_and_unknown_sizes_stay_unknown() -> None:
    x = array([8, 4])
    assert array_operation(ast.Mult, x, Const(2)) is x
    assert array_operation(ast.Mult, Const(2), Const(3)) is None
    assert array_operation(ast.Sub, x, Unknown("a scalar or an array?")) == ArrayV(None)
    batch = Unknown("batch size", symbol="batch")
    result = array_operation(ast.Add, ArrayV((batch, Const(4))), array([1, 4]))
    assert isinstance(result, ArrayV) and result.shape == (batch, Const(4))
