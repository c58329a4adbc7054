"""Sharded types through `jax.vmap`: inside the body each mapped argument has its mapped
dimension removed; the call's result gets it back at `out_axes`, split over the mesh axes the
mapped dimension of the arguments is split over (shardls/core/typing/vmap.py).

The walker runs the body with `elements` bound (recognizers/vmap.py), so its statements get
their types; `vmapped_call` is the value of the call itself, and records JAX's refusals
(SH333-SH335) at it. `in_axes` must be an int, None, or one entry per argument; `out_axes` an
int, or a tuple with one entry per output; `spmd_axis_name` a name or a tuple of names. Anything
else (a pytree of axes, `axis_size=`) means no type.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import apply, typed, with_type
from shardls.analysis.values import (
    ArrayV,
    Const,
    Seq,
    TransformedV,
    TypedArray,
    Unknown,
    Value,
    as_int,
    as_str,
)
from shardls.core.typing import ShapeError, ShardedType, TypeRejected
from shardls.core.typing.vmap import Mapping, batched, element, mapping

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs

VMAP = "jax.vmap"


def in_axes_of(value: Value | None, count: int) -> list[int | None] | None:
    """`in_axes`: 0 when absent, one int or None for all arguments, or one per argument; None
    when it is not read."""
    if value is None:
        return [0] * count
    if not isinstance(value, Seq):
        single = _axis(value)
        return None if isinstance(single, Unknown) else [single] * count
    if len(value.items) != count:
        return None
    axes: list[int | None] = []
    for item in value.items:
        axis = _axis(item)
        if isinstance(axis, Unknown):
            return None
        axes.append(axis)
    return axes


def out_axes_of(value: Value | None) -> int | tuple[int, ...] | None:
    """`out_axes`: 0 when absent, one int for every output, or a tuple of ints with an entry per
    output of a tuple result; None when it is not read: a list (JAX refuses it), or a `None`
    anywhere (allowed only for an output that does not depend on the mapped arguments, which
    the types alone do not show; JAX raises for the others)."""
    if value is None:
        return 0
    if isinstance(value, Seq) and not value.is_list:
        axes = tuple(as_int(item) for item in value.items)
        return None if any(a is None for a in axes) else tuple(a for a in axes if a is not None)
    return as_int(value)


def _axis(value: Value) -> int | None | Unknown:
    if isinstance(value, Const) and value.value is None:
        return None
    found = as_int(value)
    return found if found is not None else Unknown("in_axes= is not known")


def spmd_axis_name_of(value: Value | None) -> tuple[str, ...] | None | Unknown:
    """A name or a tuple of names; a list is not read (JAX takes it for one unhashable name)."""
    if value is None or (isinstance(value, Const) and value.value is None):
        return None
    single = as_str(value)
    if single is not None:
        return (single,)
    if isinstance(value, Seq) and not value.is_list:
        names = [as_str(item) for item in value.items]
        if all(n is not None for n in names):
            return tuple(n for n in names if n is not None)
    return Unknown("spmd_axis_name= is not known")


def with_keywords(value: Value | None, count: int, keywords: int) -> list[int | None] | None:
    """The axes of `count` positional arguments (`in_axes_of`), then 0 for each of `keywords`
    keyword arguments: `jax.vmap` maps those over their leading axis whatever `in_axes` says."""
    axes = in_axes_of(value, count)
    return None if axes is None else [*axes, *[0] * keywords]


def body_arguments(
    args: Sequence[Value],
    in_axes_value: Value | None,
    spmd_value: Value | None,
    keywords: Sequence[Value] = (),
) -> list[Value]:
    """What the body's parameters hold at a call with these arguments, then keyword arguments
    (`elements`), or nothing known when JAX refuses the call before tracing the body (or its
    options are not read)."""
    values = [*args, *keywords]
    in_axes = with_keywords(in_axes_value, len(args), len(keywords))
    spmd = spmd_axis_name_of(spmd_value)
    if in_axes is None or isinstance(spmd, Unknown):
        return []
    pairs = [
        (t.type, axis) for t, axis in ((typed(a), axis) for a, axis in zip(values, in_axes, strict=True)) if t
    ]
    try:
        mapping(pairs, spmd)
    except (TypeRejected, ShapeError):
        if any(axis is not None for _, axis in pairs):
            return []
    return elements(values, in_axes)


def elements(args: Sequence[Value], in_axes: Sequence[int | None]) -> list[Value]:
    """Each argument as the body sees it: a typed mapped argument without its mapped dimension,
    an unmapped one as it is, anything else unknown."""
    found: list[Value] = []
    for arg, axis in zip(args, in_axes, strict=True):
        t = typed(arg)
        if axis is None or is_empty(arg):
            found.append(arg)
        elif t is None:
            found.append(Unknown("an element of a vmapped argument"))
        else:
            try:
                inner = element(t.type, axis)
            except Exception:  # (an axis out of range: JAX raises, the value has no type)
                found.append(Unknown("an element of a vmapped argument"))
                continue
            inner_typed = TypedArray(inner, t.mesh, t.sources, t.assumptions)
            found.append(with_type(ArrayV(None, inner.dtype), inner_typed))
    return found


def vmapped_call(call: CallArgs, wrapped: TransformedV) -> Value | None:
    """The value of `jax.vmap(f, ...)(args)` when every mapped argument's type is known."""
    evaluator, frame, node = call.evaluator, call.frame, call.node
    return mapped_result(
        Where(evaluator, frame, node),
        dict(wrapped.arguments),
        call.args,
        lambda args, kwargs: evaluator.call(wrapped.func, args, kwargs, node, frame),
        call.kwargs,
    )


@dataclass(frozen=True)
class Where:
    """Where a vmapped call is evaluated: its refusals and its result's type are recorded there."""

    evaluator: Evaluator
    frame: Frame
    node: ast.Call


Run = Callable[[list[Value], dict[str, Value]], Value]
"""Traces the body on the elements of the positional and keyword arguments."""


def mapped_result(
    where: Where,
    arguments: dict[str, Value],
    args: Sequence[Value],
    run: Run,
    kwargs: dict[str, Value] | None = None,
) -> Value | None:
    """The value of a vmap with these options (`in_axes`, `out_axes`, `spmd_axis_name` by JAX's
    names) applied to `args` and `kwargs`, the body traced by `run` on their elements; None
    when it cannot be typed. `jax.vmap` and `nnx.vmap` (which resolves its arguments first,
    sharded/nnx_vmapped.py) share it."""
    keywords = dict(kwargs or {})
    values = [*args, *keywords.values()]
    in_axes = with_keywords(arguments.get("in_axes"), len(args), len(keywords))
    out_axes = out_axes_of(arguments.get("out_axes"))
    spmd = spmd_axis_name_of(arguments.get("spmd_axis_name"))
    if in_axes is None or out_axes is None or isinstance(spmd, Unknown):
        return None
    if "axis_size" in arguments or not any(a is not None for a in in_axes):
        return None
    pairs: list[tuple[ShardedType, int | None]] = []
    operands: list[TypedArray] = []
    for arg, axis in zip(values, in_axes, strict=True):
        t = typed(arg)
        if t is None and axis is not None and not is_empty(arg):
            return None
        if t is not None:
            pairs.append((t.type, axis))
            operands.append(t)
    evaluator = where.evaluator
    try:
        mapped = mapping(pairs, spmd)
    except TypeRejected as rejected:
        apply(evaluator, where.frame, where.node, "vmap", operands, _raising(rejected), None)
        return None
    except Exception:
        return None
    outside = evaluator.state
    evaluator.tracing = True  # the body is traced, not run
    try:
        inner = elements(values, in_axes)
        result = run(inner[: len(args)], dict(zip(keywords, inner[len(args) :], strict=True)))
    finally:
        evaluator.state = outside
    if not isinstance(result, Seq):
        return _output(where, operands, result, mapped, out_axes) if isinstance(out_axes, int) else None
    axes = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(result.items)
    if len(axes) != len(result.items) or (isinstance(out_axes, tuple) and result.is_list):
        return None  # out_axes is not a prefix of the result: JAX raises
    outputs = [_output(where, operands, r, mapped, a) for r, a in zip(result.items, axes, strict=True)]
    return Seq(tuple(o if o is not None else Unknown("vmap output") for o in outputs), result.is_list)


def is_empty(value: Value) -> bool:
    """`None` is an empty pytree: vmap maps nothing in it, whatever its in_axes says."""
    return isinstance(value, Const) and value.value is None


def _output(
    where: Where, operands: list[TypedArray], result: Value, mapped: Mapping, out_axis: int
) -> Value | None:
    out = typed(result)
    if out is None:
        return None
    return apply(
        where.evaluator,
        where.frame,
        where.node,
        "vmap",
        operands,
        lambda: batched(out.type, mapped, out_axis),
        None,
    )


def _raising(rejected: TypeRejected) -> Callable[[], ShardedType]:
    """A rule that is JAX's refusal, so that `apply` records it where the call is."""

    def rule() -> ShardedType:
        raise rejected

    return rule
