"""Linen's lifted transforms over a module class: `nn.scan(Block, length=n, variable_axes={'params':
0}, metadata_params={nn.PARTITION_NAME: 'layers'})(args)(x)` (and `nn.vmap`).

Each parameter the transformed module creates gains the axis `variable_axes['params']` of size
`length` (`axis_size` for `nn.vmap`), and its names gain the entry `metadata_params[
nn.PARTITION_NAME]` there (`Partitioned.add_axis`: padded with None up to the axis, then
inserted). Checked with Flax: without a partition name in `metadata_params`, Flax raises
`PartitioningUnspecifiedError` for a partitioned parameter, so no layout is given.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import Library
from shardls.analysis.library.registry import attributes
from shardls.analysis.values import Const, DictV, Ref, Unknown, Value

PARTITION_NAME = "partition_name"
"""`nn.PARTITION_NAME`: the `metadata_params` key naming the stacked axis."""
LIFTED = {"flax.linen.scan": "length", "flax.linen.vmap": "axis_size"}
"""The lifted transforms over a module class, with the keyword giving the stacked size."""


@dataclass(frozen=True)
class LinenLevel:
    """One axis a lifted transform adds to the parameters of the module it wraps."""

    size: Value
    axis: int | None
    """Where the axis goes; None when `variable_axes` cannot be read."""
    partition: Value | None
    """The entry the names gain; None when `metadata_params` names none (Flax raises)."""
    how: str


@dataclass(frozen=True)
class LinenStackV(Value):
    """The lifted transforms around the module whose method runs here, outermost first."""

    levels: tuple[LinenLevel, ...]


@attributes(Ref)
def _partition_name(
    library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame
) -> Value | None:
    if (
        attr == "PARTITION_NAME"
        and isinstance(base, Ref)
        and base.qualname in ("flax.linen", "flax.core.meta")
    ):
        return Const(PARTITION_NAME)
    return None


def lifted_level(evaluator: Evaluator, qualname: str, call: ast.Call, frame: Frame) -> LinenLevel | None:
    """The axis `nn.scan(...)`/`nn.vmap(...)` adds to parameters; None when `variable_axes` does
    not stack `params` (they are then shared, not stacked)."""
    _, kwargs = evaluator.call_arguments(call, frame)
    size = kwargs.get(LIFTED[qualname]) or Unknown("the number of stacked modules", symbol=LIFTED[qualname])
    axes = kwargs.get("variable_axes")
    axis_value = axes.get("params") if isinstance(axes, DictV) else Unknown("variable_axes")
    if axis_value is None:
        return None
    axis = axis_value.value if isinstance(axis_value, Const) and isinstance(axis_value.value, int) else None
    metadata = kwargs.get("metadata_params")
    partition = metadata.get(PARTITION_NAME) if isinstance(metadata, DictV) else None
    if metadata is not None and not isinstance(metadata, DictV):
        partition = Unknown("metadata_params")
    how = f"nn.{qualname.rsplit('.', 1)[-1]} at line {frame.line_of(call) + 1}"
    return LinenLevel(size, axis, partition, how)


def stacked(context_stack: Value | None, level: LinenLevel) -> LinenStackV:
    """The stack inside a transform applied where `context_stack` is in effect."""
    outer = context_stack.levels if isinstance(context_stack, LinenStackV) else ()
    return LinenStackV((*outer, level))
