"""Applying a core sharding rule where the interpreter evaluates an operation, when every fact the
rule needs is known, and recording what it gave.

A type exists only on a mesh with Explicit axes, for an array whose shape, dtype and spec are
known (`TypedArray`); every other array stays as the interpreter had it. A rejected operation
records the problem and leaves its result untyped, so nothing downstream is typed from an
operation JAX would not trace.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.sharded.events import TypeEvent
from shardls.analysis.values import ArrayV, Const, MeshV, ShardingV, SpecV, TypedArray, Value, as_int
from shardls.core import AxisType, DType, Layout, Mesh, PartitionSpec
from shardls.core.typing import ShapeError, ShardedType, TypeRejected, placed, scalar
from shardls.core.typing.fixes import (
    OUT_SHARDING_CODES,
    RESHARD_CODES,
    JoinRule,
    OutRule,
    out_sharding_choices,
    reshard_choices,
)
from shardls.core.typing.manual import combine
from shardls.core.typing.promotion import FLOAT32, INT32

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame

Rule = Callable[[], ShardedType]


class Unreadable(enum.Enum):
    """An argument the rule depends on whose value is not known: the rule must not be applied
    (JAX's result depends on it)."""

    ARGUMENT = enum.auto()


UNREADABLE = Unreadable.ARGUMENT

_REPLICATED = SpecV(PartitionSpec.of())


def typed(value: Value | None) -> TypedArray | None:
    return value.typed if isinstance(value, ArrayV) else None


def has_explicit_axis(mesh: Mesh) -> bool:
    """Whether arrays on `mesh` can have a sharded type: it has an Explicit axis (or a Manual one,
    inside a shard_map body), and sizes."""
    types = mesh.axis_types
    return (AxisType.EXPLICIT in types or AxisType.MANUAL in types) and mesh.is_resolved


def may_type(evaluator: Evaluator) -> bool:
    """Whether an evaluation now may record a typed operation (`Evaluator.typing`): not where no
    mesh of the file has Explicit axes and the context mesh has none (`TypingPass.inactive`).
    What is not evaluated there cannot change what the typing pass reports."""
    recorder = evaluator.typing
    if recorder is None:
        return False
    mesh = evaluator.state.context_mesh
    return recorder.file_typed or (mesh is not None and has_explicit_axis(mesh.mesh))


def operand(value: Value, like: TypedArray) -> ShardedType | None:
    """An operand as JAX's rule sees it: a typed array on the same mesh, or a Python number
    (weakly typed, rank 0); None when its type is not known."""
    found = typed(value)
    if found is not None:
        return found.type if found.type.mesh == like.type.mesh else None
    if isinstance(value, Const) and not isinstance(value.value, bool):
        if isinstance(value.value, int):
            return scalar(like.type, INT32)
        if isinstance(value.value, float):
            return scalar(like.type, FLOAT32)
    return None


def first_typed(values: Sequence[Value | None]) -> TypedArray | None:
    return next((t for t in (typed(v) for v in values) if t is not None), None)


def apply(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.AST,
    operation: str,
    operands: Sequence[TypedArray],
    rule: Rule,
    base: Value | None,
    *,
    collective: bool = False,
    refit: OutRule | None = None,
    realign: JoinRule | None = None,
) -> Value | None:
    """The result of `rule` as a value (`base`, the interpreter's own result, with the type), or
    `base` untyped when JAX rejects the operation (recorded) or the call is malformed. Inside a
    shard_map body the result varies along every Manual axis an operand varies along, except
    for a `collective`, whose rule says which.

    `refit` is the same operation with `out_sharding=` given (the form a quick fix writes),
    `realign` the same operation on other operands: with them, a rejection records the choices
    that would make the operation type-check (`shardls.core.typing.fixes`)."""
    if _compiled_eagerly_uncertain(evaluator, operands[0].mesh):
        return untyped(base)
    try:
        result = rule()
        if not collective:
            result = combine(result, [o.type for o in operands])
    except TypeRejected as rejected:
        fixed = with_fixes(rejected, [o.type for o in operands], refit, realign)
        _record(evaluator, frame, node, operation, None, operands, fixed)
        return untyped(base)
    except ShapeError:
        return untyped(base)
    except Exception:  # (an input no rule foresaw costs the type, never the file)
        return untyped(base)
    mesh = operands[0].mesh
    here = f"{operation} at line {frame.line_of(node) + 1}"
    typed_result = TypedArray(result, mesh, _sources(result, operands, here), _assumptions(operands))
    _record(evaluator, frame, node, operation, typed_result, operands, None)
    return with_type(base, typed_result)


def place(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.AST,
    operation: str,
    sharding: ShardingV,
    array: ArrayV,
    source: TypedArray | None,
) -> ArrayV:
    """`array` placed by `sharding` (device_put, reshard, creation with `out_sharding=`): typed when
    the mesh (the sharding's, or the context mesh for a bare spec) has Explicit axes and the spec,
    shape and dtype are known. An invalid layout stays untyped: the placement's own site reports
    it."""
    mesh = sharding.mesh if sharding.mesh is not None else evaluator.context_mesh
    dims = _concrete(array.shape)
    if mesh is None or not has_explicit_axis(mesh.mesh) or sharding.spec.unknown_entries:
        return array
    if dims is None or array.dtype is None:
        return array
    if source is not None and _compiled_eagerly_uncertain(evaluator, mesh):
        return untyped_array(array)
    outcome = placed(mesh.mesh, sharding.spec.spec, dims, array.dtype)
    if isinstance(outcome, Layout):
        return untyped_array(array)
    here = f"{operation} at line {frame.line_of(node) + 1}"
    assumptions = tuple(dict.fromkeys((*mesh.assumptions, *(source.assumptions if source else ()))))
    result = TypedArray(outcome, mesh, _sources(outcome, (), here), assumptions)
    _record(evaluator, frame, node, operation, result, (source,) if source else (), None, placement=True)
    return replace(array, typed=result)


def replicated(evaluator: Evaluator, frame: Frame, node: ast.AST, operation: str, array: ArrayV) -> ArrayV:
    """An array made without a sharding under a context mesh with Explicit axes: replicated on it
    (`jnp.ones((8, 16))` is `float32[8,16]`)."""
    mesh = evaluator.context_mesh
    if mesh is None or not has_explicit_axis(mesh.mesh):
        return array
    return place(evaluator, frame, node, operation, ShardingV(_REPLICATED, mesh), array, None)


NAME = "name"
"""The operation of an event that only says which type a name has where it is written."""


def named(evaluator: Evaluator, frame: Frame, node: ast.AST, typed_array: TypedArray) -> None:
    """Record that the name (or assignment target) `node` holds an array of this type here."""
    recorder = evaluator.typing
    if recorder is not None and frame.module.path is not None:
        recorder.record(
            TypeEvent(
                frame.module.path,
                frame.span(node),
                NAME,
                typed_array,
                assumptions=typed_array.assumptions,
                node=node,
            )
        )


def with_fixes(
    rejected: TypeRejected, operands: Sequence[ShardedType], refit: OutRule | None, realign: JoinRule | None
) -> TypeRejected:
    """The rejection with the choices a quick fix has in its problem's data (`out_shardings`:
    specs with the type each gives; `reshards`: a spec and the operands to reshard to it)."""
    problem = rejected.problem
    extra: dict[str, object] = {}
    if refit is not None and problem.code in OUT_SHARDING_CODES:
        choices = out_sharding_choices(operands, refit)
        extra["out_shardings"] = [{"spec": c.spec.to_json(), "type": c.result.jax_type} for c in choices]
    if realign is not None and problem.code in RESHARD_CODES:
        moves = reshard_choices(operands, realign)
        extra["reshards"] = [
            {"spec": c.spec.to_json(), "operands": list(c.operands), "type": c.result.jax_type} for c in moves
        ]
    if not extra:
        return rejected
    return TypeRejected(replace(problem, data={**problem.data, **extra}))


def record_rejection(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.AST,
    operation: str,
    operands: Sequence[TypedArray],
    rejected: TypeRejected,
) -> None:
    """Record that JAX refuses `operation` at `node` (a check with no result of its own, such as
    a jit argument against its in_sharding)."""
    _record(evaluator, frame, node, operation, None, operands, rejected)


def _compiled_eagerly_uncertain(evaluator: Evaluator, mesh: MeshV) -> bool:
    """Run eagerly on a mesh that mixes Auto axes with Explicit axes of size 1, an operation's
    result takes its sharding from the compiled computation, which drops the size-1 axes when
    the operand is also split along an Auto axis (JAX 0.10: `reshard(x, P('Z'))` with `x` on
    Auto `X` gives `P(None, 'X')`). Where the data lies along Auto axes is not in the type, so
    the result's type is not known there; traced code keeps the rule's type."""
    m = mesh.mesh
    if evaluator.tracing is True or not m.has_auto_axis:
        return False
    return any(
        size == 1 and kind is AxisType.EXPLICIT for size, kind in zip(m.axis_sizes, m.axis_types, strict=True)
    )


def untyped(value: Value | None) -> Value | None:
    return untyped_array(value) if isinstance(value, ArrayV) else value


def untyped_array(array: ArrayV) -> ArrayV:
    return replace(array, typed=None) if array.typed is not None else array


def with_type(base: Value | None, result: TypedArray) -> ArrayV:
    """The interpreter's result with the type; its shape kept when it agrees (its numbers carry
    their origins), else the type's."""
    t = result.type
    if isinstance(base, ArrayV):
        dims = _concrete(base.shape)
        shape = base.shape if dims == t.shape else tuple(Const(n) for n in t.shape)
        return replace(base, shape=shape, dtype=t.dtype, typed=result)
    return ArrayV(tuple(Const(n) for n in t.shape), t.dtype, typed=result)


def spec_argument(value: Value | None) -> PartitionSpec | None | Unreadable:
    """An `out_sharding=` argument: its spec, or None when absent."""
    from shardls.analysis.library.convert import sharding_of

    if value is None or (isinstance(value, Const) and value.value is None):
        return None
    sharding = sharding_of(value)
    if sharding is None or sharding.spec.unknown_entries:
        return UNREADABLE
    return sharding.spec.spec


def dtype_argument(value: Value | None, x64: bool) -> DType | None | Unreadable:
    from shardls.analysis.library.convert import dtype_of

    if value is None or (isinstance(value, Const) and value.value is None):
        return None
    return dtype_of(value, x64) or UNREADABLE


def _concrete(shape: tuple[Value, ...] | None) -> tuple[int, ...] | None:
    if shape is None:
        return None
    dims = [as_int(d) for d in shape]
    return tuple(d for d in dims if d is not None) if all(d is not None and d >= 0 for d in dims) else None


def _sources(result: ShardedType, operands: Sequence[TypedArray], here: str) -> tuple[tuple[str, str], ...]:
    """Each mesh axis of the result, with the line that put it there: an operand's, or this one."""
    axes = [a for dim in result.spec for a in dim] + sorted(result.unreduced | result.reduced)
    found: dict[str, str] = {}
    for axis in axes:
        origin = next((o.source_of(axis) for o in operands if o.source_of(axis)), None)
        found.setdefault(axis, origin or here)
    return tuple(found.items())


def _assumptions(operands: Sequence[TypedArray]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a for o in operands for a in o.assumptions))


def _record(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.AST,
    operation: str,
    result: TypedArray | None,
    operands: Sequence[TypedArray],
    rejected: TypeRejected | None,
    *,
    placement: bool = False,
) -> None:
    recorder = evaluator.typing
    if recorder is None or frame.module.path is None:
        return
    recorder.record(
        TypeEvent(
            frame.module.path,
            frame.span(node),
            operation,
            result,
            rejected.problem if rejected is not None else None,
            tuple(operands),
            evaluator.branching == 0,
            _assumptions(operands) if result is None else result.assumptions,
            node,
            placement,
        )
    )
