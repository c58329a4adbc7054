"""Shapes of array arithmetic: numpy broadcasting for elementwise operators and `@` (matmul).

Function bodies under `jax.jit`/`jax.shard_map` are mostly arithmetic on their parameters
(`x * 2`, `x @ w + b`); knowing the result's shape is what lets the analysis lay out their outputs.
Dimensions are abstract values, so an unknown size stays unknown instead of failing.
"""

from __future__ import annotations

import ast

from shardls.analysis.values import ArrayV, Const, Unknown, Value, as_int

_ELEMENTWISE = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
)


def array_operation(op: type[ast.operator], left: Value, right: Value) -> Value | None:
    """The array `left op right` gives, or None when neither operand is an array."""
    if not isinstance(left, ArrayV) and not isinstance(right, ArrayV):
        return None
    if op is ast.MatMult:
        return _matmul(left, right)
    if not issubclass(op, _ELEMENTWISE):
        return None
    if isinstance(left, ArrayV) and isinstance(right, ArrayV):
        return _broadcast_arrays(left, right)
    array, other = (left, right) if isinstance(left, ArrayV) else (right, left)
    assert isinstance(array, ArrayV)
    if isinstance(other, Const) and isinstance(other.value, (int, float, bool)):
        return array  # a number keeps the array's shape, dtype (weak typing) and sharding
    return ArrayV(None, array.dtype)


def _broadcast_arrays(left: ArrayV, right: ArrayV) -> Value:
    """The broadcast shape; the sharding of the operands that already have that shape when they
    agree on it (an elementwise result is laid out like them)."""
    if left.shape is None or right.shape is None:
        return ArrayV(None, left.dtype)
    shape = broadcast(left.shape, right.shape)
    if shape is None:
        return Unknown("shapes that do not broadcast")
    shardings = {operand.sharding for operand in (left, right) if operand.shape == shape}
    return ArrayV(shape, left.dtype, shardings.pop() if len(shardings) == 1 else None)


def broadcast(left: tuple[Value, ...], right: tuple[Value, ...]) -> tuple[Value, ...] | None:
    """numpy's broadcasting of two shapes (aligned on the right); None when they clash."""
    rank = max(len(left), len(right))
    padded_left = (Const(1),) * (rank - len(left)) + left
    padded_right = (Const(1),) * (rank - len(right)) + right
    dims: list[Value] = []
    for a, b in zip(padded_left, padded_right):
        dim = _broadcast_dim(a, b)
        if dim is None:
            return None
        dims.append(dim)
    return tuple(dims)


def _broadcast_dim(a: Value, b: Value) -> Value | None:
    size_a, size_b = as_int(a), as_int(b)
    if size_a == 1:
        return b
    if size_b == 1 or a == b:
        return a
    if size_a is not None and size_b is not None:
        return None
    # One size is unknown: in a program that runs, it is 1 or equal to the known one.
    return a if size_a is not None else b if size_b is not None else Unknown("broadcast of unknown sizes")


def _matmul(left: Value, right: Value) -> Value:
    """numpy's matmul shape rule: (..., m, k) @ (..., k, n) -> (..., m, n), with 1-D operands
    promoted and the promoted dimension dropped."""
    if not (isinstance(left, ArrayV) and isinstance(right, ArrayV)):
        return Unknown("matmul with an operand that is not an array")
    a, b = left.shape, right.shape
    if a is None or b is None or not a or not b:
        return ArrayV(None, left.dtype)
    inner_a, inner_b = a[-1], b[0] if len(b) == 1 else b[-2]
    if as_int(inner_a) is not None and as_int(inner_b) is not None and as_int(inner_a) != as_int(inner_b):
        return Unknown("matmul of mismatched inner dimensions")
    batch = broadcast(a[:-2], b[:-2])
    if batch is None:
        return Unknown("matmul batch dimensions that do not broadcast")
    rows = a[-2:-1]
    columns = b[-1:] if len(b) > 1 else ()
    return ArrayV(batch + rows + columns, left.dtype)
