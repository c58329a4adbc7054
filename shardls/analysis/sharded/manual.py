"""Sharded types inside and out of `shard_map` bodies, and the collectives of those bodies.

The shard_map recognizer asks `typed_block` for the value of each parameter inside the body (the
argument's per-device block with the manual axes as its varying axes, `{V:X}`) and
`typed_output` for the global type of each output; the collectives (`jax.lax.psum`, `all_gather`,
`ppermute`, `axis_index`, ...) are rules of the registry like any operation. The rules are the
core's (shardls/core/typing/manual.py, collectives.py); this module reads their arguments.
Anything unread (an axis name from a variable, `axis_index_groups=`) means no type.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.node_memo import per_node
from shardls.analysis.sharded.propagate import apply, typed, untyped, with_type
from shardls.analysis.sharded.registry import calls, flag_argument
from shardls.analysis.values import (
    ArrayV,
    Const,
    FunctionV,
    MeshV,
    Ref,
    Seq,
    SetV,
    SpecV,
    TransformedV,
    TypedArray,
    Unknown,
    Value,
    as_int,
    as_str,
)
from shardls.core import Mesh, PartitionSpec
from shardls.core.typing import ShapeError, ShardedType, TypeRejected
from shardls.core.typing.collectives import (
    REDUCING,
    all_gather,
    all_to_all,
    axis_index,
    pcast_varying,
    ppermute,
    psum_scatter,
)
from shardls.core.typing.collectives import reduce as collective_reduce
from shardls.core.typing.manual import block, inferred_in_spec, manual_mesh, output

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs

LAX = "jax.lax."
SHARD_MAP_APIS = ("jax.shard_map", "jax.experimental.shard_map.shard_map", "flax.nnx.shard_map")


def inside_mesh(mesh: MeshV, resolved: Mesh, axis_names: frozenset[str] | None) -> MeshV:
    """The context mesh inside the body: the call's mesh (with its sizes resolved) with the
    manual axes typed Manual, so that the blocks and what the body creates share one mesh."""
    return replace(mesh, mesh=manual_mesh(resolved, axis_names))


def typed_block(
    argument: ArrayV | None,
    block_value: ArrayV,
    spec: PartitionSpec | None,
    inside: MeshV,
    check_vma: bool | None,
    function: str,
) -> tuple[ArrayV, TypeRejected | None]:
    """`block_value` (the argument's block, from its layout) with its type inside the body when
    the argument's type is known; `spec` None means in_specs were omitted (inferred from the
    type). The rejection, if JAX refuses the argument, is the caller's to report."""
    arg = typed(argument)
    if arg is None or not check_vma or arg.type.mesh.axis_names != inside.mesh.axis_names:
        # With check_vma=False JAX tracks no varying axes in the body, which the collectives'
        # rules assume: such a body is not typed.
        return block_value, None
    try:
        in_spec = spec if spec is not None else inferred_in_spec(arg.type, inside.mesh)
        t = block(
            arg.type,
            in_spec,
            inside.mesh,
            check_vma=check_vma,
            infer_in_specs=spec is None,
            function=function,
        )
    except TypeRejected as rejected:
        return block_value, rejected
    except ShapeError:
        return block_value, None
    result = TypedArray(t, inside, arg.sources, arg.assumptions)
    return with_type(block_value, result), None


def typed_output(
    body: Value | None,
    global_value: ArrayV | None,
    spec: PartitionSpec,
    outside: MeshV,
    check_vma: bool | None,
    function: str,
) -> tuple[ArrayV | None, TypeRejected | None]:
    """The output outside the call, with its global type when the body's output is typed; and
    the rejection when JAX refuses out_specs for it."""
    out = typed(body)
    if out is None or check_vma is None or out.type.mesh.axis_names != outside.mesh.axis_names:
        return global_value, None
    try:
        t = output(out.type, spec, outside.mesh, check_vma=check_vma, function=function)
    except TypeRejected as rejected:
        return global_value, rejected
    except ShapeError:
        return global_value, None
    return with_type(global_value, TypedArray(t, outside, out.sources, out.assumptions)), None


def check_vma(value: Value | None) -> bool | None:
    """`check_vma=` (`check_rep=` in the legacy API): True when absent, None when unknown."""
    if value is None:
        return True
    return value.value if isinstance(value, Const) and isinstance(value.value, bool) else None


def axis_names(value: Value | None) -> frozenset[str] | None | Unknown:
    """`axis_names={...}` (partial manual mode): None when absent or empty (every axis manual)."""
    if value is None:
        return None
    if not isinstance(value, (SetV, Seq)):
        return Unknown("axis_names= is not known")
    names = [as_str(item) for item in value.items]
    if any(n is None for n in names):
        return Unknown("axis_names= is not known")
    return frozenset(n for n in names if n is not None) or None


def shard_mapped_call(call: CallArgs, wrapped: TransformedV) -> Value | None:
    """The value of calling a shard_mapped function (`jax.shard_map(f, ...)(x)`)."""
    evaluator = call.evaluator
    func = wrapped.func
    name = func.func.name if isinstance(func, FunctionV) else "f"
    written = wrapped.node.args[0] if wrapped.node.args else None

    def run(blocks: list[Value]) -> Value:
        if isinstance(written, ast.Lambda) and call.node.func is wrapped.node:
            # `jax.shard_map(lambda a: ..., ...)(x)`: the lambda's body, where it is written
            names = [a.arg for a in [*written.args.posonlyargs, *written.args.args]]
            if len(names) != len(blocks):
                return Unknown("the lambda takes other arguments")
            frame = replace(call.frame, locals={**call.frame.locals, **dict(zip(names, blocks, strict=True))})
            return evaluator.evaluate(written.body, frame)
        return evaluator.call(func, blocks, {}, call.node, call.frame)

    return _mapped_call(evaluator, call.args, call.kwargs, dict(wrapped.arguments), run, name)


def shard_mapped_function_call(
    evaluator: Evaluator, func: FunctionV, args: list[Value], kwargs: dict[str, Value], frame: Frame
) -> Value | None:
    """The value of calling a function decorated with `@jax.shard_map(...)` (or
    `@partial(jax.shard_map, ...)`); None when it is not so decorated. Its body must never run
    on the caller's global arrays: when the call is not typed, its value is unknown."""
    arguments = _decorator_arguments(evaluator, func) if func.func.node.decorator_list else None
    if arguments is None:
        return None

    def run(blocks: list[Value]) -> Value:
        return evaluator.call_function(func, blocks, {}, frame)

    found = _mapped_call(evaluator, args, kwargs, arguments, run, func.func.name)
    return found if found is not None else Unknown(f"the result of the shard_mapped {func.func.name}()")


def _decorator_arguments(evaluator: Evaluator, func: FunctionV) -> dict[str, Value] | None:
    """The arguments of a shard_map decorator on `func`, evaluated where the `def` is."""
    from shardls.analysis.evaluator import Frame
    from shardls.analysis.library.transforms import wrapper_arguments

    info = func.func
    for decorator in info.node.decorator_list:
        if not isinstance(decorator, ast.Call) or not _mentions_shard_map(decorator):
            continue
        frame = Frame(info.module, info.parent, info.segment, info.parent.order_of.get(id(info.node)), {})
        wrapper = evaluator.evaluate(decorator.func, frame)
        args, kwargs = evaluator.call_arguments(decorator, frame)
        if isinstance(wrapper, Ref) and wrapper.qualname == "functools.partial" and args:
            wrapper, args = args[0], args[1:]
        if isinstance(wrapper, Ref) and wrapper.qualname in SHARD_MAP_APIS:
            return wrapper_arguments(wrapper.qualname, [func, *args], kwargs)
    return None


@per_node
def _mentions_shard_map(decorator: ast.Call) -> bool:
    """Whether a decorator call names shard_map (`@jax.shard_map(...)`, `@partial(shard_map,
    ...)`): decided once per decorator, since every call of a decorated function asks."""
    written = ast.unparse(decorator.func) + (ast.unparse(decorator.args[0]) if decorator.args else "")
    return "shard_map" in written


def _mapped_call(
    evaluator: Evaluator,
    args: list[Value],
    kwargs: dict[str, Value],
    arguments: dict[str, Value],
    run: Callable[[list[Value]], Value],
    name: str,
) -> Value | None:
    """A shard_mapped call with typed arguments: the body (`run`) evaluated on their blocks, its
    outputs laid out by out_specs. Only the plain forms (one spec for all arguments or one per
    argument, one spec per output) are typed; the recognizer reports what JAX rejects, and a
    rejected call has no value here."""
    meshes = _call_meshes(evaluator, arguments)
    vma = check_vma(arguments.get("check_vma", arguments.get("check_rep")))
    if meshes is None or vma is None or kwargs:
        return None
    outside, inside = meshes
    in_specs = _specs(arguments["in_specs"], len(args)) if "in_specs" in arguments else [None] * len(args)
    if in_specs is None:
        return None
    blocks: list[Value] = []
    for argument, spec in zip(args, in_specs, strict=True):
        if not isinstance(argument, ArrayV) or argument.typed is None:
            return None
        block_value, rejected = typed_block(argument, ArrayV(None, argument.dtype), spec, inside, vma, name)
        if rejected is not None or block_value.typed is None:
            return None
        blocks.append(block_value)
    previous = evaluator.state
    evaluator.context_mesh, evaluator.tracing = inside, True
    try:
        result = run(blocks)
    finally:
        evaluator.state = previous
    out_specs = arguments.get("out_specs")
    if isinstance(out_specs, SpecV) and isinstance(result, ArrayV):
        return _output(result, out_specs, outside, vma, name)
    if isinstance(out_specs, Seq) and isinstance(result, Seq) and len(out_specs.items) == len(result.items):
        outputs = [
            _output(r, o, outside, vma, name) for r, o in zip(result.items, out_specs.items, strict=True)
        ]
        if all(isinstance(o, ArrayV) for o in outputs):
            return Seq(tuple(o for o in outputs if o is not None), result.is_list)
    return None


def _output(result: Value, spec: Value, outside: MeshV, vma: bool, name: str) -> ArrayV | None:
    if not isinstance(spec, SpecV) or spec.unknown_entries or not isinstance(result, ArrayV):
        return None
    value, rejected = typed_output(result, ArrayV(None, result.dtype), spec.spec, outside, vma, name)
    return value if rejected is None and value is not None and value.typed is not None else None


def _call_meshes(evaluator: Evaluator, arguments: dict[str, Value]) -> tuple[MeshV, MeshV] | None:
    """The call's mesh (mesh=, which must be the context mesh when there is one, else the
    context mesh) and the body's, when both are known, resolved and well formed (JAX rejects a
    mesh with other than one size and one type per name where it is built)."""
    context = evaluator.context_mesh
    declared = arguments.get("mesh")
    if declared is not None and not isinstance(declared, MeshV):
        return None
    mesh = declared if isinstance(declared, MeshV) else context
    if mesh is None or not mesh.mesh.is_resolved or not mesh.mesh.well_formed:
        return None
    if isinstance(declared, MeshV) and context is not None and context.mesh != declared.mesh:
        return None  # JAX refuses a mesh= other than the context mesh (SH211)
    names = axis_names(arguments.get("axis_names"))
    if isinstance(names, Unknown):
        return None
    return mesh, inside_mesh(mesh, mesh.mesh, names)


def _specs(value: Value, count: int) -> list[PartitionSpec | None] | None:
    """in_specs as one spec per argument: one P for all, or a sequence of P."""
    if isinstance(value, SpecV):
        return None if value.unknown_entries else [value.spec] * count
    if isinstance(value, Seq) and len(value.items) == count:
        specs = [v.spec for v in value.items if isinstance(v, SpecV) and not v.unknown_entries]
        return list(specs) if len(specs) == count else None
    return None


# -- collectives ---------------------------------------------------------------------------------


def _axis_names(value: Value | None) -> tuple[str, ...] | None:
    """An `axis_name` argument: one name or a tuple of names."""
    single = as_str(value) if value is not None else None
    if single is not None:
        return (single,)
    if isinstance(value, Seq):
        names = [as_str(item) for item in value.items]
        if all(n is not None for n in names):
            return tuple(n for n in names if n is not None)
    return None


def _int(value: Value | None, default: int) -> int | None:
    return default if value is None else as_int(value)


def _collective(
    call: CallArgs, base: Value | None, rule: Callable[[ShardedType, tuple[str, ...]], ShardedType]
) -> Value | None:
    x = typed(call.get(0, "x"))
    axes = _axis_names(call.get(1, "axis_name"))
    groups = call.get(None, "axis_index_groups")
    if (
        x is None
        or axes is None
        or not (groups is None or (isinstance(groups, Const) and groups.value is None))
    ):
        return untyped(base)
    name = call.qualname.rsplit(".", 1)[-1]
    return apply(
        call.evaluator, call.frame, call.node, name, [x], lambda: rule(x.type, axes), base, collective=True
    )


@calls(*(LAX + name for name in REDUCING))
def _reducing(call: CallArgs, base: Value | None) -> Value | None:
    name = call.qualname.rsplit(".", 1)[-1]
    return _collective(call, base, lambda t, axes: collective_reduce(name, t, axes))


@calls(LAX + "ppermute")
def _ppermute(call: CallArgs, base: Value | None) -> Value | None:
    return _collective(call, base, ppermute)


@calls(LAX + "pcast")
def _pcast(call: CallArgs, base: Value | None) -> Value | None:
    to = call.get(2, "to")
    if to is None or as_str(to) != "varying":
        return untyped(base)
    return _collective(call, base, pcast_varying)


@calls(LAX + "all_gather")
def _all_gather(call: CallArgs, base: Value | None) -> Value | None:
    axis = _int(call.get(None, "axis"), 0)
    tiled = flag_argument(call.get(None, "tiled"))
    if axis is None or tiled is None or call.get(None, "to") is not None:
        return untyped(base)
    return _collective(call, base, lambda t, axes: all_gather(t, axes, axis, tiled=tiled))


@calls(LAX + "psum_scatter")
def _psum_scatter(call: CallArgs, base: Value | None) -> Value | None:
    dimension = _int(call.get(None, "scatter_dimension"), 0)
    tiled = flag_argument(call.get(None, "tiled"))
    if dimension is None or tiled is None:
        return untyped(base)
    return _collective(call, base, lambda t, axes: psum_scatter(t, axes, dimension, tiled=tiled))


@calls(LAX + "all_to_all")
def _all_to_all(call: CallArgs, base: Value | None) -> Value | None:
    split_axis = _int(call.get(2, "split_axis"), -1)
    concat_axis = _int(call.get(3, "concat_axis"), -1)
    tiled = flag_argument(call.get(None, "tiled"))
    if split_axis is None or concat_axis is None or split_axis < 0 or concat_axis < 0 or tiled is None:
        return untyped(base)
    return _collective(call, base, lambda t, axes: all_to_all(t, axes, split_axis, concat_axis, tiled=tiled))


@calls(LAX + "axis_index")
def _axis_index(call: CallArgs, base: Value | None) -> Value | None:
    """`axis_index(axes)`: typed on the context mesh, when it is a shard_map body's."""
    mesh = call.evaluator.context_mesh
    axes = _axis_names(call.get(0, "axis_name"))
    if mesh is None or axes is None:
        return untyped(base)
    try:
        t = axis_index(mesh.mesh, axes)
    except ShapeError:
        return untyped(base)
    here = f"axis_index at line {call.frame.line_of(call.node) + 1}"
    return with_type(base, TypedArray(t, mesh, tuple((a, here) for a in axes), mesh.assumptions))
