"""Types inside and out of a `shard_map` body, where the mapped mesh axes are Manual.

Inside the body each argument is its per-device block (`_shard_shaped_array` in JAX's
shard_map.py): the global shape divided by the in_spec's axes, the argument's own sharding with
the Manual axes (and Auto ones) removed, and, with `check_vma` (the default), the in_spec's axes
as its *varying manual axes* (vma, printed `{V:X}`): the axes along which the block may differ
from device to device. An operation of several operands varies along every axis any of them
varies along (JAX inserts the `pvary` casts itself), so `combine` is the whole rule for
non-collective operations; the collectives (collectives.py) are the only ones that remove axes.

The result of the call is the body's output block times the sizes of out_specs' axes
(`_unshard_shaped_array`), and JAX first checks that the output varies along no axis out_specs
leaves out: an output that may differ between devices cannot be declared replicated over them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from shardls.core.mesh import AxisType, Mesh
from shardls.core.spec import PartitionSpec, entry_axes
from shardls.core.typing.errors import TYPE_ERROR, VALUE_ERROR, ShapeError, reject
from shardls.core.typing.results import check_divisible, short
from shardls.core.typing.types import ShardedType, SpecAxes, explicit_spec

NOT_MODELLED = "not modelled"
"""The `jax_error` of a ShapeError for a case whose type shardls does not compute (JAX may well
accept it): the value simply has no type."""


def manual_mesh(mesh: Mesh, axis_names: frozenset[str] | None) -> Mesh:
    """The context mesh inside the body: the manual axes (all of them when `axis_names` is None)
    typed Manual, the others as they were."""
    types = tuple(
        AxisType.MANUAL if axis_names is None or name in axis_names else kind
        for name, kind in zip(mesh.axis_names, mesh.axis_types, strict=True)
    )
    return replace(mesh, axis_types=types)


def manual_axes(mesh: Mesh) -> frozenset[str]:
    return frozenset(n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t is AxisType.MANUAL)


def spec_axes(spec: PartitionSpec) -> frozenset[str]:
    """Every mesh axis a spec names (`_spec_to_vma`)."""
    return frozenset(a for entry in spec.entries for a in entry_axes(entry) if isinstance(a, str))


def block(
    arg: ShardedType,
    spec: PartitionSpec,
    inside: Mesh,
    *,
    check_vma: bool = True,
    infer_in_specs: bool = False,
    function: str = "f",
) -> ShardedType:
    """The type of one argument inside the body, on `inside` (`manual_mesh` of the call's mesh).

    Raises TypeRejected (SH330) where JAX refuses the argument for an in_spec that differs from
    its type, or SH310 where the block no longer divides by the argument's other Explicit axes;
    and ShapeError where the spec does not fit (too long, not dividing, naming an axis that is
    not manual: the shard_map site reports those with the layout's own codes)."""
    if arg.unreduced or arg.reduced or spec.unreduced or spec.reduced or arg.varying:
        raise ShapeError("unreduced, reduced or nested manual arguments", NOT_MODELLED)
    if len(spec.entries) > arg.rank:
        raise ShapeError("in_specs longer than the argument's rank", VALUE_ERROR)
    if not spec_axes(spec) <= manual_axes(inside):
        raise ShapeError("shard_map in_specs argument must refer to an axis marked as manual", VALUE_ERROR)
    sizes = inside.sizes_by_name
    entries = spec.padded(arg.rank)
    divisors = [math.prod(sizes[a] for a in entry_axes(e) if isinstance(a, str)) for e in entries]
    if any(n % d for n, d in zip(arg.shape, divisors, strict=True)):
        raise ShapeError("in_specs do not divide the argument", VALUE_ERROR)
    if not infer_in_specs:
        _check_matches_type(arg, spec, inside, function)
    manual = manual_axes(inside)
    kept: SpecAxes = tuple(
        tuple(a for a in axes if a not in manual and inside.types_by_name[a] is AxisType.EXPLICIT)
        for axes in arg.spec
    )
    shape = tuple(n // d for n, d in zip(arg.shape, divisors, strict=True))
    check_divisible(inside, shape, kept)
    return ShardedType(
        shape,
        arg.dtype,
        inside,
        kept,
        weak_type=arg.weak_type,
        varying=spec_axes(spec) if check_vma else frozenset(),
    )


def _check_matches_type(arg: ShardedType, spec: PartitionSpec, inside: Mesh, function: str) -> None:
    """With every mesh axis manual and Explicit, JAX requires each in_spec to be the argument's
    own spec (shard_map reshards nothing): "in_specs passed to shard_map: ... does not match"."""
    if any(t is not AxisType.MANUAL for t in inside.axis_types):
        return
    if any(t is not AxisType.EXPLICIT for t in arg.mesh.axis_types):
        return
    wanted = explicit_spec(arg.mesh, spec, arg.rank)
    if wanted == arg.spec:
        return
    raise reject(
        "SH330",
        f"in_specs passed to shard_map: {_spec_text(wanted)} does not match the specs of the input: "
        f"{_spec_text(arg.spec)} for arg: {arg.jax_type}. `in_specs` is an optional argument so you "
        "can omit specifying it and shard_map will infer the in_specs from the arguments. If you want "
        "to reshard your inputs, you can use `jax.reshard` on the arguments and then pass those args "
        "to shard_map.",
        VALUE_ERROR,
        function=function,
        in_spec=_spec_text(wanted),
        arg_spec=_spec_text(arg.spec),
    )


def inferred_in_spec(arg: ShardedType, inside: Mesh) -> PartitionSpec:
    """With in_specs omitted each argument's spec is its type's, on the manual axes only
    (`_manual_spec`). JAX allows it only when every manual axis is Explicit (a TypeError
    otherwise)."""
    manual = manual_axes(inside)
    outer = arg.mesh.types_by_name
    if any(outer[a] is not AxisType.EXPLICIT for a in manual):
        raise ShapeError("in_specs can be omitted only when every manual axis is Explicit", TYPE_ERROR)
    return PartitionSpec.of(*(tuple(a for a in axes if a in manual) for axes in arg.spec))


def unchecked(t: ShardedType) -> ShardedType:
    """With `check_vma=False` JAX tracks no varying axes at all."""
    return replace(t, varying=frozenset()) if t.varying else t


def combine(result: ShardedType, operands: Sequence[ShardedType]) -> ShardedType:
    """A non-collective operation's result varies along every axis one of its operands varies
    along: JAX casts the others with `pvary` before applying the rule."""
    varying = frozenset().union(*(o.varying for o in operands))
    return result if varying == result.varying else replace(result, varying=result.varying | varying)


def output(
    body: ShardedType,
    spec: PartitionSpec,
    outside: Mesh,
    *,
    check_vma: bool = True,
    function: str = "f",
) -> ShardedType:
    """The global type of one output: the block times out_specs' axes (manual axes first in a
    dimension, then the body's own Explicit axes), on the mesh outside the call.

    Raises TypeRejected (SH331) when the body's output varies along an axis out_specs leave
    out, and ShapeError for what is not modelled (unreduced outputs, too long specs)."""
    if body.unreduced or body.reduced or spec.unreduced or spec.reduced:
        raise ShapeError("unreduced or reduced shard_map outputs", NOT_MODELLED)
    if len(spec.entries) > body.rank:
        raise ShapeError("out_specs longer than the output's rank", VALUE_ERROR)
    named = spec_axes(spec)
    if check_vma:
        _check_replicated(body, spec, named, function)
    sizes = outside.sizes_by_name
    entries = spec.padded(body.rank)
    shape = tuple(
        n * math.prod(sizes[a] for a in entry_axes(e) if isinstance(a, str))
        for n, e in zip(body.shape, entries, strict=True)
    )
    merged = PartitionSpec.of(
        *(
            tuple(a for a in entry_axes(e) if isinstance(a, str)) + own
            for e, own in zip(entries, body.spec, strict=True)
        )
    )
    return ShardedType(
        shape,
        body.dtype,
        outside,
        explicit_spec(outside, merged, body.rank),
        weak_type=body.weak_type,
        varying=body.varying & manual_axes(outside),
    )


def _check_replicated(body: ShardedType, spec: PartitionSpec, named: frozenset[str], function: str) -> None:
    """`_inout_vma_error`: out_specs that leave out an axis the output varies along."""
    mesh = body.mesh
    unmentioned = [a for a in mesh.axis_names if a not in named]
    wrong = [a for a in unmentioned if a in body.varying]
    if not wrong:
        return
    if len(unmentioned) > 1:
        need = ",".join(a for a in mesh.axis_names if a in named)
        got = ",".join(a for a in mesh.axis_names if a in body.varying)
        detail = (
            f"out_specs is {_spec_text(spec.entries)} which implies that the corresponding output value is "
            f"only varying across mesh axes {{{need}}} and not {{{','.join(wrong)}}}, but it was "
            f"inferred to be possibly varying over {{{got}}}"
        )
    else:
        detail = (
            f"out_specs is {_spec_text(spec.entries)} which implies that the corresponding output value is "
            f"replicated across mesh axis '{unmentioned[0]}', but could not infer replication over any axes"
        )
    raise reject(
        "SH331",
        f"shard_map applied to the function '{function}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {mesh.axis_sizes} with corresponding axis names {mesh.axis_names}.\n\n"
        f"{detail}\n\nCheck if these output values are meant to be replicated over those mesh axes. "
        "If not, consider revising the corresponding out_specs entries. If so, consider disabling "
        "the check by passing the check_vma=False argument to `jax.shard_map`.",
        VALUE_ERROR,
        function=function,
        output=short(body),
        axes=tuple(wrong),
    )


def _spec_text(entries: Sequence[object]) -> str:
    """A spec as JAX prints a PartitionSpec, a tuple's repr: `P('X', None)`, `P('X',)`, `P()`."""
    parts = []
    for entry in entries:
        axes = entry if isinstance(entry, tuple) else ((entry,) if entry is not None else ())
        names = [a for a in axes if isinstance(a, str)]
        if not names:
            parts.append("None")
        elif len(names) == 1:
            parts.append(repr(names[0]))
        else:
            parts.append("(" + ", ".join(repr(a) for a in names) + ")")
    return f"P({', '.join(parts)}{',' if len(parts) == 1 else ''})"
