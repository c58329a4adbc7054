"""Sharded types through `nnx.vmap` over functions of arrays, and through vmap decorators.

On plain arrays Flax 0.12's `nnx.vmap` is `jax.vmap` (checked by running both,
docs/sharding-types.md): the same body types, result types and refusals (SH333-SH335), with
`spmd_axis_name` adding nothing to the type. What differs is how the arguments reach JAX. In
Flax's default graph mode the call's arguments are first resolved to positions like
`inspect.signature(f).bind(*args, **kwargs)` followed by `apply_defaults()`: a keyword argument
is mapped by the `in_axes` entry of its position, a parameter left to its default is passed (and
mapped) too, and a keyword-only parameter is a `TypeError`. With `graph=False` the arguments go
to `jax.vmap` as written (a keyword argument mapped over axis 0). In both modes `in_axes` must be
an int, None or a *tuple* (a list is a pytree-prefix `ValueError`). Everything else (the
mapping, the body's elements, the result) is `sharded/vmapped.py`, shared with `jax.vmap`.

A function decorated with a vmap (`@nnx.vmap`, `@nnx.vmap(...)`, `@partial(nnx.vmap, ...)`,
`@jax.vmap`, `@partial(jax.vmap, ...)`) is called through `vmapped_function_call`: its body
must never be evaluated on the caller's whole arrays.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from shardls.analysis.node_memo import per_node
from shardls.analysis.sharded.propagate import typed
from shardls.analysis.sharded.vmapped import VMAP, Run, Where, body_arguments, mapped_result
from shardls.analysis.values import Const, FunctionV, Ref, Seq, Unknown, Value

if TYPE_CHECKING:
    from shardls.analysis.definitions import FunctionInfo
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs
    from shardls.analysis.library.nnx import VmapV

NNX_VMAP = "nnx.vmap"
NNX_VMAP_API = "flax.nnx.vmap"
_PARTIAL = "functools.partial"
_TRANSFORMS = ("vmap", "scan", "shard_map", "pmap")
"""Decorators that change what a function's body receives."""
_TYPED_OPTIONS = ("spmd_axis_name", "axis_size")
"""The options of `nnx.vmap` besides the axes that decide a type (`axis_size` means none yet)."""


@dataclass(frozen=True)
class Vmap:
    """One vmap applied to a function: `jax.vmap`'s options by JAX's names, whether it is
    Flax's, and whether Flax resolves the call's arguments to positions first (graph mode)."""

    arguments: dict[str, Value]
    flax: bool
    resolves: bool
    unread: bool = False
    """Another transform of the arguments decorates the function too (`@nnx.vmap` twice,
    `@nnx.scan`): what its body sees is not read."""

    @property
    def refused(self) -> bool:
        """Flax refuses an `in_axes` list in either mode (a pytree prefix of the tuple of
        arguments), where `jax.vmap` reads it as a tuple."""
        in_axes = self.arguments.get("in_axes")
        return self.flax and isinstance(in_axes, Seq) and in_axes.is_list


def of_nnx(vmap: VmapV) -> Vmap | None:
    """An `nnx.vmap(...)` value as a vmap (None for `nnx.scan`, which scans instead)."""
    if vmap.name != NNX_VMAP:
        return None
    options = dict(vmap.options)
    graph = options.get("graph")
    resolves = not (isinstance(graph, Const) and graph.value is False)
    arguments = {"in_axes": vmap.in_axes, "out_axes": vmap.out_axes}
    arguments.update((name, options[name]) for name in _TYPED_OPTIONS if name in options)
    return Vmap(arguments, True, resolves)


def nnx_vmapped_call(call: CallArgs, vmap: VmapV) -> Value | None:
    """The value of `nnx.vmap(f, ...)(args)` when every mapped argument's type is known."""
    found = of_nnx(vmap)
    func = vmap.func
    if found is None or not isinstance(func, FunctionV):
        return None
    evaluator, frame, node = call.evaluator, call.frame, call.node
    return _mapped(
        evaluator,
        Where(evaluator, frame, node),
        found,
        func,
        call.args,
        call.kwargs,
        lambda args, kwargs: evaluator.call(func, args, kwargs, node, frame),
    )


def _mapped(
    evaluator: Evaluator,
    where: Where,
    vmap: Vmap,
    func: FunctionV,
    args: Sequence[Value],
    kwargs: Mapping[str, Value],
    run: Run,
) -> Value | None:
    passed = _passed(evaluator, vmap, func, args, kwargs)
    return None if passed is None else mapped_result(where, vmap.arguments, passed[0], run, passed[1])


def _passed(
    evaluator: Evaluator, vmap: Vmap, func: FunctionV, args: Sequence[Value], kwargs: Mapping[str, Value]
) -> tuple[list[Value], dict[str, Value]] | None:
    """The positional and keyword arguments the vmap's rules apply to at a call, or None when
    Flax refuses the call before tracing its body (or it is beyond this reading): in Flax's graph
    mode all resolved to positions by name and defaults, else as written (`jax.vmap` maps the
    keyword arguments over axis 0)."""
    if func.bound is not None or vmap.refused or vmap.unread:
        return None  # (a bound method is not read: Flax refuses one of a Module)
    if not vmap.resolves:
        return list(args), dict(kwargs)
    positional = flax_arguments(evaluator, func.func, args, kwargs)
    return None if positional is None else (positional, {})


def flax_arguments(
    evaluator: Evaluator, info: FunctionInfo, args: Sequence[Value], kwargs: Mapping[str, Value]
) -> list[Value] | None:
    """The positional arguments Flax hands `jax.vmap` for a call of `info` (`resolve_kwargs`:
    bound by name, defaults applied), or None when Flax raises a `TypeError` (a keyword-only
    parameter, a missing argument, an unknown keyword) or the signature is beyond this reading."""
    node = info.node.args
    if node.vararg is not None or node.kwarg is not None or node.kwonlyargs:
        return None
    names = [a.arg for a in [*node.posonlyargs, *node.args]]
    by_keyword, passed = names[len(node.posonlyargs) :], names[: len(args)]
    if len(args) > len(names) or any(k not in by_keyword or k in passed for k in kwargs):
        return None
    return positional_values(evaluator, info, {**dict(zip(names, args)), **kwargs})


def positional_values(
    evaluator: Evaluator, info: FunctionInfo, bound: Mapping[str, Value]
) -> list[Value] | None:
    """Each positional parameter's value: bound, else its default (evaluated where the `def`
    is, as Python does); None when one has neither."""
    node = info.node.args
    parameters = [*node.posonlyargs, *node.args]
    defaults: dict[str, ast.expr] = {
        p.arg: d for p, d in zip(parameters[len(parameters) - len(node.defaults) :], node.defaults)
    }
    found: list[Value] = []
    for parameter in parameters:
        name = parameter.arg
        if name in bound:
            found.append(bound[name])
        elif name in defaults:
            found.append(evaluator.evaluate(defaults[name], defining_frame(info)))
        else:
            return None
    return found


def defining_frame(info: FunctionInfo) -> Frame:
    """The frame where the `def` of `info` is, in which Python evaluates its decorators and
    defaults."""
    from shardls.analysis.evaluator import Frame

    return Frame(info.module, info.parent, info.segment, info.parent.order_of.get(id(info.node)), {})


# -- vmap decorators -----------------------------------------------------------------------------


def decorator_vmap(evaluator: Evaluator, info: FunctionInfo, defined: Frame) -> Vmap | None:
    """The vmap among `info`'s decorators (evaluated in `defined`), if there is one; unread when
    another decorator transforms the arguments too."""
    found = _first_vmap(evaluator, info, defined)
    transforms = sum(1 for d in info.node.decorator_list if any(w in _written(d) for w in _TRANSFORMS))
    return replace(found, unread=True) if found is not None and transforms > 1 else found


def _first_vmap(evaluator: Evaluator, info: FunctionInfo, defined: Frame) -> Vmap | None:
    from shardls.analysis.library.nnx import VmapV, bare_transform
    from shardls.analysis.library.transforms import wrapper_arguments

    for decorator in info.node.decorator_list:
        if "vmap" not in _written(decorator):
            continue
        if isinstance(decorator, ast.Call):
            wrapper = evaluator.evaluate(decorator.func, defined)
            if isinstance(wrapper, Ref) and wrapper.qualname == _PARTIAL:
                args, kwargs = evaluator.call_arguments(decorator, defined)
                if args and isinstance(args[0], Ref) and args[0].qualname == VMAP:
                    return Vmap(wrapper_arguments(VMAP, [FunctionV(info), *args[1:]], kwargs), False, False)
        value = bare_transform(evaluator.evaluate(decorator, defined))
        if isinstance(value, Ref) and value.qualname == VMAP:
            return Vmap({}, False, False)
        if isinstance(value, VmapV):
            return of_nnx(value)
    return None


@per_node
def _written(decorator: ast.expr) -> str:
    """A decorator's text, unparsed once per decorator, since every call of a decorated function
    asks what its decorators name."""
    return ast.unparse(decorator)


def vmapped_function_call(
    evaluator: Evaluator,
    func: FunctionV,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call | None,
    frame: Frame,
) -> Value | None:
    """The value of calling a function decorated with a vmap over typed arrays; None when it is
    not so decorated, or maps no typed array (modules and rngs: the layers it creates are
    stacked, library/nnx.py). Its body never runs on the caller's whole arrays: when the call is
    not typed (or another decorator wraps the vmap), its value is unknown."""
    info = func.func
    if not any("vmap" in _written(d) for d in info.node.decorator_list):
        return None
    if not any(typed(a) is not None for a in [*args, *kwargs.values()]):
        return None
    vmap = decorator_vmap(evaluator, info, defining_frame(info))
    if vmap is None:
        return None
    found = None
    if node is not None and len(info.node.decorator_list) == 1:
        found = _mapped(
            evaluator,
            Where(evaluator, frame, node),
            vmap,
            func,
            args,
            kwargs,
            lambda args, kwargs: evaluator.call_function(func, args, kwargs, frame),
        )
    return found if found is not None else Unknown(f"the result of the vmapped {info.name}()")


# -- the body ------------------------------------------------------------------------------------


def body_locals(
    evaluator: Evaluator,
    info: FunctionInfo,
    vmap: Vmap,
    args: Sequence[Value],
    kwargs: Mapping[str, Value],
    bound: Mapping[str, Value],
) -> dict[str, Value]:
    """The body's parameters at a call with these arguments, which bind `bound`: each typed
    array the vmap passes as one element (unknown when the call is refused or cannot be read).
    Other values (rngs, modules, the layers a stacking vmap creates from them) are left as
    bound."""
    passed = _passed(evaluator, vmap, FunctionV(info), args, kwargs)
    positional, keywords = passed if passed is not None else ([], {})
    arguments = vmap.arguments
    elements = (
        body_arguments(
            positional, arguments.get("in_axes"), arguments.get("spmd_axis_name"), list(keywords.values())
        )
        if passed is not None
        else []
    )
    names = [a.arg for a in [*info.node.args.posonlyargs, *info.node.args.args]][: len(positional)]
    inner = dict(zip([*names, *keywords], elements, strict=False))
    found = dict(bound)
    for name, value in bound.items():
        if typed(value) is not None:
            found[name] = inner.get(name, Unknown("an element of a vmapped argument"))
    return found
