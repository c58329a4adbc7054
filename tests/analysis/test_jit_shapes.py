"""The shapes of array arithmetic (shardls/analysis/shapes.py), judged by numpy: broadcasting,
matmul, dot, einsum and basic indexing must give numpy's shape, or fail where numpy fails."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from shardls.analysis.shapes import IndexItem, array_operation, dot_shape, einsum_shape, index_shape
from shardls.analysis.values import ArrayV, Const, Unknown, Value

dims = st.lists(st.sampled_from([1, 2, 3, 4]), min_size=0, max_size=4)


def array(shape: list[int]) -> ArrayV:
    return ArrayV(tuple(Const(n) for n in shape))


def shape_of(value: Value) -> tuple[int, ...] | None:
    if not isinstance(value, ArrayV) or value.shape is None:
        return None
    return ints(value.shape)


def ints(shape: tuple[Value, ...] | None) -> tuple[int, ...] | None:
    if shape is None:
        return None
    return tuple(d.value for d in shape if isinstance(d, Const) and isinstance(d.value, int))


def consts(shape: list[int]) -> tuple[Value, ...]:
    return tuple(Const(n) for n in shape)


def numpy_or_none(compute: object) -> tuple[int, ...] | None:
    """The shape numpy computes, or None where numpy raises."""
    try:
        return tuple(compute().shape)  # type: ignore[operator]
    except (ValueError, IndexError):
        return None


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


@given(
    st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=3),
    st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=3),
)
def test_dot_like_numpy(a: list[int], b: list[int]) -> None:
    expected = numpy_or_none(lambda: np.dot(np.zeros(a), np.zeros(b)))
    assert ints(dot_shape(consts(a), consts(b))) == expected


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("bd,df->bf", [(8, 16), (16, 32)]),
        ("bd,df", [(8, 16), (16, 32)]),
        ("ij,jk->ki", [(2, 3), (3, 4)]),
        ("ii->i", [(4, 4)]),
        ("ii", [(4, 4)]),
        ("i,i", [(3,), (3,)]),
        ("i,j->ij", [(2,), (5,)]),
        ("...d,df->...f", [(2, 3, 16), (16, 4)]),
        ("...d,df", [(2, 3, 16), (16, 4)]),
        ("b...,b...->b...", [(2, 1, 4), (2, 3, 1)]),
        ("bhqd,bhkd->bhqk", [(2, 4, 8, 16), (2, 4, 6, 16)]),
        ("BTD,DNH->BTNH", [(2, 8, 16), (16, 4, 4)]),
        ("ba,ac", [(2, 3), (3, 4)]),
        (" bd , df -> bf ", [(8, 16), (16, 32)]),
        ("bd,df->bf", [(8, 16), (15, 32)]),
        ("bd,df->bx", [(8, 16), (16, 32)]),
        ("bdf,df->bf", [(8, 16), (16, 32)]),
        ("bd->bd", [(8, 16), (16, 32)]),
    ],
)
def test_einsum_like_numpy(subscripts: str, shapes: list[tuple[int, ...]]) -> None:
    expected = numpy_or_none(lambda: np.einsum(subscripts, *(np.zeros(s) for s in shapes)))
    assert ints(einsum_shape(subscripts, [consts(list(s)) for s in shapes])) == expected


def test_einsum_of_an_unknown_operand_is_unknown() -> None:
    assert einsum_shape("bd,df->bf", [consts([8, 16]), None]) is None


index_items = st.one_of(
    st.integers(-3, 3),
    st.builds(
        slice,
        st.none() | st.integers(-5, 5),
        st.none() | st.integers(-5, 5),
        st.sampled_from([None, 1, 2, -1, -2]),
    ),
    st.none(),
    st.just(Ellipsis),
)


@given(st.lists(st.integers(0, 4), max_size=3), st.lists(index_items, max_size=4))
def test_basic_indexing_like_numpy(shape: list[int], index: list[IndexItem]) -> None:
    try:
        expected: tuple[int, ...] | None = np.zeros(shape)[tuple(index)].shape
    except IndexError as error:
        assume("out of bounds" not in str(error))  # only shapes are modelled, not which elements exist
        expected = None
    assert ints(index_shape(consts(shape), tuple(index))) == expected


def test_slicing_an_unknown_size_keeps_it_only_when_whole() -> None:
    batch = Unknown("batch", symbol="batch")
    shape = index_shape((batch, Const(8)), (slice(None), slice(0, 4)))
    assert shape == (batch, Const(4))
    sliced = index_shape((batch,), (slice(1, None),))
    assert sliced is not None and isinstance(sliced[0], Unknown)


def test_slicing_a_negative_size_is_unknown_not_an_error() -> None:
    """Found by the long fuzz run: `jnp.zeros((-3,))[1:]` made `slice.indices` raise."""
    sliced = index_shape((Const(-3), Const(8)), (slice(1, None),))
    assert sliced is not None and isinstance(sliced[0], Unknown) and sliced[1] == Const(8)
