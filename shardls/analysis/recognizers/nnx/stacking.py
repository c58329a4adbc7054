"""A parameter of a layer that `nnx.vmap`/`nnx.scan` stacks (reference §4.7): each level adds its
axis to the shape, and to the annotation only with `transform_metadata` (`spmd.add_axis`); without
it the annotation keeps the rank of one layer (SH208). Linen's lifted transforms stack the same
way (`insert_spec_entry`)."""

from __future__ import annotations

from dataclasses import replace

from shardls.analysis.facts import Span
from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.nnx import StackV
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.values import Seq, SpecV, Value
from shardls.analysis.walker import Visit
from shardls.core import PartitionSpec, Problem, Severity
from shardls.core.spec import SpecEntry


def stacked(
    builder: SiteBuilder,
    visit: Visit,
    span: Span,
    name: str,
    shape: tuple[Value, ...] | None,
    spec: SpecV,
) -> tuple[tuple[Value, ...] | None, SpecV, tuple[str, ...]]:
    """Each `nnx.vmap` level (innermost first) inserts its axis into the shape, and into the spec
    only when it has `transform_metadata` (`spmd.add_axis`); without it the spec is one entry
    short and `nnx.get_partition_spec` shards the wrong dimensions (SH208)."""
    stack = visit.context.stacked
    if not isinstance(stack, StackV):
        return shape, spec, ()
    notes: list[str] = []
    for level in reversed(stack.levels):
        if shape is not None:
            shape = (*shape[: level.axis], level.size, *shape[level.axis :])
        if level.has_metadata:
            spec = insert_spec_entry(spec, level.axis, level.partition)
            notes.append(
                f"dim {level.axis} stacked by {level.how}; this is the layout nnx.get_partition_spec "
                "gives (inside the vmap Flax creates the value unsharded along it)"
            )
        else:
            notes.append(
                f"dim {level.axis} stacked by {level.how} without transform_metadata: the "
                f"annotation {spec.spec.display()} is one entry short"
            )
            builder.report(level.span or span, _missing_metadata(level.transform), site_name=name)
    return shape, spec, tuple(notes)


def _missing_metadata(transform: str) -> Problem:
    return Problem(
        "SH208",
        Severity.ERROR,
        f"{transform} stacks annotated parameters here without "
        "transform_metadata={nnx.PARTITION_NAME: ...}: "
        "their annotations keep the rank of one layer, so nnx.get_partition_spec shards the wrong "
        "dimensions of the stacked values; add transform_metadata={nnx.PARTITION_NAME: None} (or a "
        "mesh/logical axis for the stacked dimension)",
        {},
    )


def insert_spec_entry(spec: SpecV, index: int, entry: Value) -> SpecV:
    """`insert_field` (how `nnx.vmap` with transform_metadata stacks an annotation): pad with None up to `index`, then insert the new entry there."""
    entries = list(spec.spec.entries) + [None] * max(0, index - len(spec.spec.entries))
    spans = list(spec.entry_spans) + [None] * max(0, len(entries) - len(spec.entry_spans))
    converted = spec_of(Seq((entry,)))
    unknown = [i + (i >= index) for i in spec.unknown_entries]
    new: SpecEntry = None
    if converted is None or converted.unknown_entries:
        unknown.append(index)
    else:
        new = converted.spec.entries[0]
    entries.insert(index, new)
    spans.insert(index, None)
    return replace(
        spec,
        spec=PartitionSpec(tuple(entries), spec.spec.unreduced, spec.spec.reduced),
        unknown_entries=tuple(sorted(unknown)),
        entry_spans=tuple(spans),
    )
