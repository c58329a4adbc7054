"""`jax.jit(f, in_shardings=..., out_shardings=...)`, its decorator forms and legacy `pjit`.

Where JAX checks what (reference §1.4, §3.3): a `NamedSharding` is checked against its mesh where
it is built, and `jit` rejects `P.UNCONSTRAINED` as soon as it is applied; shapes meet the
shardings only when the jitted function is called, and a bare `P` takes the context mesh of that
call. So each sharding gets a site where it is written, and a layout per argument and per output
at every call visible in the file (the output's shape from evaluating the function's return).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from shardls.analysis.evaluator import Evaluator
from shardls.analysis.facts import SiteKind
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import sharding_of
from shardls.analysis.library.transforms import NNX_JITS
from shardls.analysis.recognizers.body_result import body_result
from shardls.analysis.recognizers.nnx_lifted import nnx_result, nnx_site
from shardls.analysis.recognizers.sharding_pairs import Pair, pair_arguments
from shardls.analysis.recognizers.wrapped import (
    SHAPE_CODES,
    Application,
    CallSite,
    application_of,
    at_call,
    binds,
    call_site,
    call_sites,
    caller_walker,
    output_pairs,
    pair_span,
    positional_arguments,
    quiet_mesh,
)
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import ArrayV, Const, FunctionV, MeshV, Seq, ShardingV, Value, as_int, as_str
from shardls.analysis.walker import Context, Visit
from shardls.core import AxisType, Problem, UsageContext

_PREDICTED = (
    "out_shardings not given: XLA keeps the sharding of the argument this output is an elementwise "
    "function of (predicted)"
)


# `pjit` is canonicalised to `jax.jit`; its own name is listed so that calls spelled `pjit(...)`
# are looked at.
@recognizes("jax.jit", "jax.experimental.pjit.pjit", *NNX_JITS)
def jit(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    app = application_of(builder.evaluator, visit, call.qualname, call.args, call.kwargs)
    if app is None or (app.get("in_shardings") is None and app.get("out_shardings") is None):
        return
    met = [
        (_inputs(builder, app, site), _outputs(builder, app, site))
        for site in call_sites(caller_walker(builder, visit), app, 0)
    ]
    _written(builder, app, met)


def layouts_at(builder: SiteBuilder, app: Application, visit: Visit) -> None:
    """The input and output layouts of `app` at a call found elsewhere than by its module's
    caller search: a call in another module of a function jitted in this one
    (`analysis/foreign_jit.py`)."""
    site = call_site(builder.evaluator, app, visit, None)
    _inputs(builder, app, site)
    _outputs(builder, app, site)


@binds("jax.jit", *NNX_JITS)
def _bind(evaluator: Evaluator, app: Application, site: CallSite) -> tuple[dict[str, Value], Context]:
    """Inside jit the parameters have the shapes of the arguments (and their in_shardings)."""
    return _locals(evaluator, app, site), site.visit.context


# -- where the shardings are written -------------------------------------------------------------


def _written(builder: SiteBuilder, app: Application, met: list[tuple[list[Pair], list[Pair]]]) -> None:
    """A site for each sharding where the jit call writes it. A bare `P` is checked only where
    the function is called (against that call's context mesh), unless no call is visible. The
    shapes JAX checks are those of the calls (`met`: per visible call, its input and output
    pairs), so a written sharding shows the array every call it meets agrees on and reports
    none of the problems of that shape: each call reports its own where JAX raises them. The
    calls are then what uses a NamedSharding built in the file (`Site.sharding_span`), not the
    place it is written into the jit."""
    called = bool(met)
    names = [n for i, n in enumerate(app.parameters) if i not in _static_positions(app)]
    inputs = pair_arguments(app.get("in_shardings"), app.node("in_shardings"), [], names)
    result = None if called else body_result(builder.evaluator, app, {})
    outputs = output_pairs(
        app.get("out_shardings"), app.node("out_shardings"), result, None, f"{app.name}(...)"
    )
    visit = app.visit
    call_span = visit.frame.span(visit.call)
    for kind, pairs, side in ((SiteKind.JIT_IN, inputs, 0), (SiteKind.JIT_OUT, outputs, 1)):
        for index, pair in enumerate(pairs):
            sharding = sharding_of(pair.spec)
            if sharding is None or (called and sharding.mesh is None):
                continue
            span = visit.frame.span(pair.spec_node) if pair.spec_node is not None else call_span
            mesh = (
                builder.select_mesh(sharding, visit, UsageContext.JIT, span)
                if sharding.mesh is not None
                else quiet_mesh(builder, visit, span)
            )
            array = pair.value if not called else _agreed(pairs, index, [call[side] for call in met])
            builder.add_layout(
                kind,
                visit,
                span,
                pair.label or app.name,
                sharding.spec,
                array.shape if array is not None else None,
                array.dtype if array is not None else None,
                UsageContext.JIT,
                mesh,
                superseded=_shape_problem if called else None,
                sharding=None if called else sharding,
            )


def _agreed(written: list[Pair], index: int, calls: list[list[Pair]]) -> ArrayV | None:
    """The array the written sharding `written[index]` meets at every call whose array is known,
    when those arrays agree on shape and dtype; None otherwise, or when a call pairs it with
    several arrays (a pytree prefix over a tuple or a module's variables) or none."""
    arrays: list[ArrayV] = []
    node = written[index].spec_node
    for pairs in calls:
        if node is not None:
            met = [pair for pair in pairs if pair.spec_node is node]
        else:  # not written out: the call's pairs must line up with the written ones
            met = [pairs[index]] if len(pairs) == len(written) and pairs[index].spec_node is None else []
        if len(met) != 1:
            return None
        array = met[0].value
        if array is not None and array.shape is not None:
            arrays.append(array)
    if not arrays or len({(array.shape, array.dtype) for array in arrays}) != 1:
        return None
    return arrays[0]


def _shape_problem(problem: Problem) -> bool:
    return problem.code in SHAPE_CODES


# -- at a call -----------------------------------------------------------------------------------


def _inputs(builder: SiteBuilder, app: Application, site: CallSite) -> list[Pair]:
    """The input layouts at one call; returns the pairs they come from."""
    pairs = _input_pairs(app, nnx_site(builder.evaluator, app, site))
    for pair in pairs:
        _at_call(builder, site, SiteKind.JIT_IN, pair, legacy_mesh=_is_pjit(app))
    return pairs


def _outputs(builder: SiteBuilder, app: Application, site: CallSite) -> list[Pair]:
    """The output layouts at one call; returns the pairs of the out_shardings written (none
    when the outputs' shardings are predicted)."""
    specs = app.get("out_shardings")
    result = body_result(builder.evaluator, app, _locals(builder.evaluator, app, site))
    result = nnx_result(builder.evaluator, app, result, site.visit.frame)
    default = f"{app.name}(...)"
    if specs is not None:
        pairs = output_pairs(specs, app.node("out_shardings"), result, site, default)
        for pair in pairs:
            _at_call(builder, site, SiteKind.JIT_OUT, pair, legacy_mesh=_is_pjit(app))
        return pairs
    # No out_shardings: pair every array of the result with a placeholder, keep the sharded ones.
    for pair in output_pairs(Const(None), None, result, site, default):
        if pair.value is not None and pair.value.sharding is not None:
            _at_call(builder, site, SiteKind.JIT_OUT, replace(pair, spec=pair.value.sharding), predicted=True)
    return []


def _is_pjit(app: Application) -> bool:
    """`pjit(...)` or `partial(pjit, ...)` (canonicalised to `jax.jit`, so told by its spelling):
    unlike `jax.jit`, it resolves bare specs against the deprecated `with mesh:` (EasyLM's
    `@partial(pjit, in_shardings=(model_ps, PS()))` under `with mesh:` runs on JAX 0.10)."""
    call = app.visit.call
    func: ast.expr = call.func
    if _spelling(func) == "partial" and call.args:
        func = call.args[0]
    return _spelling(func) == "pjit"


def _spelling(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


def _at_call(
    builder: SiteBuilder,
    site: CallSite,
    kind: SiteKind,
    pair: Pair,
    predicted: bool = False,
    legacy_mesh: bool = False,
) -> None:
    """A layout for one sharding leaf at a call. Its problems are reported at the call, except
    those a NamedSharding already raised where it was built (and none for a prediction)."""
    sharding = sharding_of(pair.spec)
    if sharding is None:
        return  # `None` (unspecified) or a value that is not known to be a sharding
    visit = site.visit
    call_span = visit.frame.span(visit.call)
    mesh = builder.select_mesh(sharding, visit, UsageContext.JIT, call_span, legacy_serves=legacy_mesh)
    superseded: Callable[[Problem], bool] | None = None
    if predicted:
        superseded = _every_problem
    elif sharding.mesh is not None:
        superseded = _construction_problem
    array = pair.value
    builder.add_layout(
        kind,
        visit,
        pair_span(visit.frame, pair, call_span),
        pair.label,
        at_call(sharding.spec),
        array.shape if array is not None else None,
        array.dtype if array is not None else None,
        UsageContext.JIT,
        mesh,
        assumptions=(_PREDICTED,) if predicted else (),
        superseded=superseded,
        sharding=None if predicted else sharding,
    )


def _construction_problem(problem: Problem) -> bool:
    return problem.code not in SHAPE_CODES


def _every_problem(problem: Problem) -> bool:
    return True


def _input_pairs(app: Application, site: CallSite) -> list[Pair]:
    arguments = positional_arguments(app, site, _static_positions(app))
    return pair_arguments(app.get("in_shardings"), app.node("in_shardings"), arguments)


def _locals(evaluator: Evaluator, app: Application, site: CallSite) -> dict[str, Value]:
    """The parameters inside the function. On Auto axes an argument takes its in_sharding (on
    Explicit axes jit does not change the type of a numpy argument, reference §3.3)."""
    if isinstance(app.function, FunctionV):
        function = app.function.func
        receiver = site.receiver or app.receiver
        bound = evaluator.bind_arguments(function, site.args, site.kwargs, receiver, site.visit.frame)
    else:
        bound = dict(zip(app.parameters, site.args))
    for pair in _input_pairs(app, site):
        sharding = _auto_sharding(pair.spec, site)
        if pair.value is not None and pair.value is bound.get(pair.label) and sharding is not None:
            bound[pair.label] = ArrayV(pair.value.shape, pair.value.dtype, sharding)
    return bound


def _auto_sharding(spec: Value, site: CallSite) -> ShardingV | None:
    """The sharding a jit input gets, with its mesh, when every mesh axis is Auto."""
    sharding = sharding_of(spec)
    if sharding is None:
        return None
    context = site.visit.context.mesh
    mesh: MeshV | None = sharding.mesh
    if sharding.bare and context is not None and not context.legacy:
        mesh = context.mesh
    if mesh is None or any(t is not AxisType.AUTO for t in mesh.mesh.axis_types):
        return None
    return ShardingV(sharding.spec, mesh)


def _static_positions(app: Application) -> frozenset[int]:
    """Positions among the caller's arguments of `static_argnums`/`static_argnames`: they take
    no sharding. (jit numbers a decorated method's `self` too, which callers do not pass.)"""
    positions: set[int] = set()
    offset = 1 if app.receiver is not None else 0
    for value in _items(app.get("static_argnums")):
        number = as_int(value)
        if number is not None and number >= offset:
            positions.add(number - offset)
    names = app.parameters
    for value in _items(app.get("static_argnames")):
        name = as_str(value)
        if name in names:
            positions.add(names.index(name))
    return frozenset(positions)


def _items(value: Value | None) -> tuple[Value, ...]:
    if isinstance(value, Seq):
        return value.items
    return (value,) if isinstance(value, Const) else ()
