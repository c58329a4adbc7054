"""Functions wrapped by `jax.jit` / `jax.shard_map`, shared by their recognizers.

A wrapper is applied as a call (`step = jax.jit(f, ...)`), as a decorator (`@jax.shard_map(...)`,
`@partial(jax.jit, ...)`) or by the legacy APIs; its shardings only meet shapes where the wrapped
function is called. This module finds those calls, hands their arguments and results to the
pairing of sharding pytrees (`sharding_pairs.py`), evaluates what the function returns, and tells the
walker how the wrapped function's body runs (its parameters bound as the wrapper passes them).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import MeshFact, Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx import VmapV
from shardls.analysis.library.transforms import (
    JIT_PARTIAL,
    PARTIAL_ARGS,
    WRAPPED_METHODS,
    WRAPPER_PARAMETERS,
    wrapper_arguments,
)
from shardls.analysis.recognizers.sharding_pairs import Argument, Pair, pair_tree
from shardls.analysis.reuse import Hashed, frame_key, reuse_of
from shardls.analysis.sites import SiteBuilder, recognizer_for, recognizes
from shardls.analysis.values import (
    BoundMethod,
    FunctionV,
    Ref,
    Seq,
    SpecV,
    TransformedV,
    Unknown,
    Value,
    options,
)
from shardls.analysis.walker import MAX_CONTEXTS, Context, Visit, Walker, body_contexts, first_arguments

_ANY = re.compile("")
JIT_APIS = ("jax.jit", "flax.nnx.jit", JIT_PARTIAL)


@dataclass(frozen=True)
class Application:
    """One application of a wrapper, with its arguments by JAX's parameter names."""

    api: str
    """`jax.jit`, `jax.shard_map`, `jax.experimental.shard_map.shard_map`, `jax.vmap`, or
    `flax.nnx.vmap` (whose calls recognizers/nnx/stacked_bodies.py finds with `call_sites`)."""
    visit: Visit
    """The wrapper call (or the `partial(...)` call) and where it runs."""
    arguments: Mapping[str, Value]
    nodes: Mapping[str, ast.expr]
    function: Value | None
    definition: ast.FunctionDef | ast.AsyncFunctionDef | None
    """The decorated `def`, when the wrapper is a decorator."""

    def get(self, name: str) -> Value | None:
        return self.arguments.get(name)

    def node(self, name: str) -> ast.expr | None:
        return self.nodes.get(name)

    @property
    def name(self) -> str:
        """The wrapped function's name, for naming sites (`f(x)`)."""
        if isinstance(self.function, FunctionV):
            return self.function.func.name
        node = self.node(WRAPPER_PARAMETERS[self.api][0])
        if isinstance(node, ast.Lambda):
            return "<lambda>"
        return ast.unparse(node) if node is not None else "<function>"

    @property
    def lambda_node(self) -> ast.Lambda | None:
        node = self.node(WRAPPER_PARAMETERS[self.api][0])
        return node if isinstance(node, ast.Lambda) else None

    @property
    def parameters(self) -> list[str]:
        """The wrapped function's positional parameter names, the ones its callers pass (not a
        method's `self`); empty when the function is not visible."""
        if isinstance(self.function, FunctionV):
            args = self.function.func.node.args
        elif self.lambda_node is not None:
            args = self.lambda_node.args
        else:
            return []
        names = [a.arg for a in [*args.posonlyargs, *args.args]]
        return names[1:] if self.receiver is not None else names

    @property
    def receiver(self) -> Value | None:
        """What a method's first parameter is bound to (its instance or class), for a method."""
        function = self.function
        if not isinstance(function, FunctionV) or function.func.kind not in ("method", "classmethod"):
            return None
        return function.bound or Unknown(f"the receiver of {function.func.qualname}()")

    @property
    def bound_name(self) -> str | None:
        """The name the wrapped function is called by: the decorated `def`, or the assignment
        (also of an outer wrapper, as in `step = jax.jit(jax.shard_map(f, ...))`)."""
        if self.definition is not None:
            return self.definition.name
        if self.visit.target is not None:
            return self.visit.target
        parent, statement = self.visit.parent, self.visit.statement
        wrapped_again = parent is not None and bool(parent.args) and parent.args[0] is self.visit.call
        if wrapped_again and isinstance(statement, ast.Assign) and statement.value is parent:
            targets = statement.targets
            return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None
        return None

    def is_wrapper(self, value: Value) -> bool:
        """Whether a called value is this application's result, possibly wrapped again by jit
        (`nnx.vmap(f, ...)` is a VmapV made at the application's call)."""
        while isinstance(value, BoundMethod) and isinstance(value.base, TransformedV):
            if value.base.node is self.visit.call:
                return True
            value = value.base.func
        if isinstance(value, VmapV):
            return value.span is not None and value.span == self.visit.frame.span(self.visit.call)
        return (
            isinstance(value, FunctionV)
            and self.definition is not None
            and value.func.node is self.definition
        )


def application_of(
    evaluator: Evaluator, visit: Visit, qualname: str, args: list[Value], kwargs: dict[str, Value]
) -> Application | None:
    """The application a wrapper call (or `functools.partial(wrapper, ...)`) makes, if it wraps
    a function here: given as its first argument, or the `def` it decorates."""
    nodes: list[ast.expr] = list(visit.call.args)
    if qualname == "functools.partial":
        inner = args[0] if args else None
        if not isinstance(inner, Ref) or inner.qualname not in WRAPPER_PARAMETERS:
            return None
        api, args, nodes = inner.qualname, args[1:], nodes[1:]
    elif qualname in WRAPPER_PARAMETERS:
        api = qualname
    else:
        return None
    parameters = WRAPPER_PARAMETERS[api]
    named = {k.arg: k.value for k in visit.call.keywords if k.arg is not None}
    if not any(isinstance(n, ast.Starred) for n in nodes):
        named.update(zip(parameters, nodes))
    values = wrapper_arguments(api, args, kwargs)
    definition = _decorated(visit)
    function = values.get(parameters[0])
    if definition is not None:
        frame = visit.frame
        info = evaluator.function_info(
            definition, frame.module, frame.segment, frame.scope, frame.scope.owner
        )
        function = FunctionV(info)
    if function is None:
        return None
    return Application(api, visit, values, named, function, definition)


def _decorated(visit: Visit) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    statement = visit.statement
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        decorator is visit.call for decorator in statement.decorator_list
    ):
        return statement
    return None


@recognizes("functools.partial")
def partial(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`partial(jax.jit, ...)` / `partial(shard_map, ...)`: handled by the wrapper's recognizer."""
    inner = call.args[0] if call.args else None
    if isinstance(inner, Ref) and inner.qualname in WRAPPER_PARAMETERS:
        recognizer = recognizer_for(inner.qualname)
        if recognizer is not None:
            recognizer(builder, visit, call)


# -- call sites ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallSite:
    """A call of the wrapped function (`step(x)`, `f(x)`, `step.lower(x)`, `jit(f)(x)`)."""

    visit: Visit
    args: list[Value]
    kwargs: dict[str, Value]
    arg_nodes: tuple[ast.expr | None, ...]
    receiver: Value | None = None
    """The instance a wrapped method is called on (`trainer.step(x)`), when known."""

    @property
    def where(self) -> str:
        return f"{_short(self.visit.call.func)}(...) at line {self.visit.frame.line_of(self.visit.call) + 1}"

    @property
    def targets(self) -> tuple[str, ...]:
        """The names the call's result is assigned to: `y = f(x)` -> (y,), `a, b = f(x)` -> (a, b)."""
        statement = self.visit.statement
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is not self.visit.call:
            return ()
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        elements = targets[0].elts if len(targets) == 1 and isinstance(targets[0], ast.Tuple) else targets
        if len(targets) == 1 and all(isinstance(e, ast.Name) for e in elements):
            return tuple(e.id for e in elements if isinstance(e, ast.Name))
        return ()


def caller_walker(builder: SiteBuilder, visit: Visit) -> Walker:
    """A walker over the module of `visit`, used only to search for callers (which needs no
    trigger patterns)."""
    return Walker(builder.evaluator, visit.frame.module, _ANY, _ANY)


def call_sites(walker: Walker, app: Application, depth: int) -> list[CallSite]:
    """The calls of the wrapped function visible in this module (at most MAX_CONTEXTS)."""
    found = [call_site(walker.evaluator, app, visit, None) for visit in _direct_calls(app)]
    name = app.bound_name
    names = [name] if name is not None else []
    if app.api in JIT_APIS and names:
        names.extend(WRAPPED_METHODS)
    for callee in names:
        for visit in _in_this_run(app, walker.calls_named(callee, depth)):
            if len(found) >= MAX_CONTEXTS:
                return found
            called = _called_value(walker.evaluator, app, visit)
            if called is not None:
                receiver = called.bound if isinstance(called, FunctionV) else None
                found.append(call_site(walker.evaluator, app, visit, receiver))
    return found


def _in_this_run(app: Application, searched: list[Visit]) -> list[Visit]:
    """The calls found, those in the function that wraps (`@partial(jax.shard_map,
    in_specs=spec)` on a nested `def`) as the same call of that function runs them: each call of
    the enclosing function wraps anew, with its own arguments (a spec built from `x.ndim`), and
    its calls pass that call's arrays, never another's. The caller search finds such a call once
    per context it reaches the function in: the one with the wrapping's arguments is kept, else
    the call is evaluated in the wrapping's frame and context."""
    wrapped = app.visit.frame
    if wrapped.scope.kind != "function":
        return searched
    runs: dict[ast.Call, list[Visit]] = {}
    for visit in searched:
        if visit.frame.scope is wrapped.scope:
            runs.setdefault(visit.call, []).append(visit)
    kept: list[Visit] = []
    for visit in searched:
        same = runs.get(visit.call)
        if same is None:
            kept.append(visit)
        elif same[0] is visit:
            this = next((v for v in same if _same_arguments(v.frame, wrapped)), None)
            kept.append(
                this or replace(visit, frame=wrapped.at(visit.frame.position), context=app.visit.context)
            )
    return kept


def _same_arguments(called: Frame, wrapped: Frame) -> bool:
    return called.locals is wrapped.locals or (
        called.locals.keys() == wrapped.locals.keys()
        and all(called.locals[name] == value for name, value in wrapped.locals.items())
    )


def _direct_calls(app: Application) -> list[Visit]:
    """`jax.jit(f, ...)(x)` and `jax.jit(f, ...).lower(x)`: the wrapper's result called at once."""
    parent = app.visit.parent
    if parent is None:
        return []
    func = parent.func
    visit = app.visit
    if func is app.visit.call or (
        isinstance(func, ast.Attribute) and func.value is app.visit.call and func.attr in WRAPPED_METHODS
    ):
        return [Visit(parent, visit.frame, visit.context, visit.statement, None)]
    if _names_jit(func) and parent.args and parent.args[0] is app.visit.call:
        # `jax.jit(jax.shard_map(f, ...))(x)`: jit hands `x` to the wrapped function unchanged
        outer = next(
            (n for n in ast.walk(visit.statement) if isinstance(n, ast.Call) and n.func is parent), None
        )
        if outer is not None:
            return [Visit(outer, visit.frame, visit.context, visit.statement, None)]
    return []


def _names_jit(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "jit") or (
        isinstance(func, ast.Name) and func.id == "jit"
    )


def _called_value(evaluator: Evaluator, app: Application, visit: Visit) -> Value | None:
    """What the call calls, when it is this application's result (else None)."""
    func = visit.call.func
    if isinstance(func, ast.Attribute) and func.attr in WRAPPED_METHODS:
        func = func.value
    return next((o for o in options(evaluator.evaluate(func, visit.frame)) if app.is_wrapper(o)), None)


def call_site(evaluator: Evaluator, app: Application, visit: Visit, receiver: Value | None) -> CallSite:
    """A call with its arguments; after `nnx.jit_partial(f, *bound)`, the bound ones first (not
    written at the call: their sites go on the call)."""
    args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
    starred = next((i for i, a in enumerate(visit.call.args) if isinstance(a, ast.Starred)), None)
    nodes = tuple(a if starred is None or i < starred else None for i, a in enumerate(visit.call.args))
    nodes += (None,) * (len(args) - len(nodes))
    bound = app.get(PARTIAL_ARGS)
    ahead = list(bound.items) if isinstance(bound, Seq) else []
    return CallSite(visit, [*ahead, *args], kwargs, (None,) * len(ahead) + nodes[: len(args)], receiver)


# -- pairing shardings with arguments -------------------------------------------------------------


def output_pairs(
    specs: Value | None,
    specs_node: ast.expr | None,
    result: Value | None,
    site: CallSite | None,
    default: str,
) -> list[Pair]:
    """Pair out_shardings/out_specs with what the function returns, each leaf named after the
    variable it is assigned to (`y = f(x)`, `a, b = f(x)`), else `default` and its path."""
    if specs is None:
        return []
    names = site.targets if site is not None else ()
    node = site.visit.call if site is not None else None
    pairs = pair_tree(specs, specs_node, Argument(result, node, ""))
    return [replace(pair, label=_output_name(pair.label, names, default)) for pair in pairs]


def _output_name(path: str, names: tuple[str, ...], default: str) -> str:
    if len(names) == 1:
        return names[0] + path
    match = re.match(r"\[(\d+)\]", path)
    if match is not None and int(match.group(1)) < len(names):
        return names[int(match.group(1))] + path[match.end() :]
    return default + path


def positional_arguments(
    app: Application, site: CallSite | None, skip: frozenset[int] = frozenset()
) -> list[Argument]:
    """A call site's positional arguments named after the wrapped function's parameters,
    leaving out the positions in `skip` (jit's static arguments)."""
    if site is None:
        return []
    names = app.parameters
    return [
        Argument(value, node, names[index] if index < len(names) else f"args[{index}]")
        for index, (value, node) in enumerate(zip(site.args, site.arg_nodes))
        if index not in skip
    ]


SHAPE_CODES = frozenset({"SH001", "SH002", "SH003", "SH007"})
"""Problems that need the array's shape: JAX raises them where the function is called."""


def at_call(spec: SpecV) -> SpecV:
    """The spec without its source positions, so that the problems a call raises are reported at
    the call (where JAX raises them) instead of where the spec is written."""
    return replace(spec, span=None, entry_spans=())


def pair_span(frame: Frame, pair: Pair, fallback: Span) -> Span:
    """Where a pair's site goes: the array's argument when written out, else `fallback`."""
    if pair.node is not None:
        return frame.span(pair.node)
    return fallback


def quiet_mesh(builder: SiteBuilder, visit: Visit, span: Span) -> MeshFact | None:
    """The mesh a bare spec would get here when no call is visible: JAX reads the context mesh
    only when the wrapped function is called, so a missing one is not reported here."""
    context = visit.context.mesh
    if context is not None and context.in_turn:  # the module sets another mesh before a call, maybe
        how = f"{context.how}, where the function is defined; JAX reads the mesh current where it is called"
        return replace(builder.mesh_fact(context.mesh), selection=how, fallback=True)
    if context is not None and not context.legacy:
        return replace(builder.mesh_fact(context.mesh), selection=context.how)
    return builder.fallback_for(span)


# -- how the wrapped function's body runs -----------------------------------------------------------

Binder = Callable[[Evaluator, Application, CallSite], tuple[dict[str, Value], Context]]
"""The values a wrapper gives the wrapped function's parameters at one call site, and the context
its body runs in there."""
_BINDERS: dict[str, Binder] = {}
_WRAPPER_NAMES = ("jit", "pjit", "shard_map", "vmap")


def binds(*apis: str) -> Callable[[Binder], Binder]:
    def register(binder: Binder) -> Binder:
        for api in apis:
            _BINDERS[api] = binder
        return binder

    return register


@body_contexts(rank=0)  # jit, shard_map and vmap hand the body values of their own
def wrapped_bodies(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """A wrapped function's body runs once per call of its wrapper, with the parameters the
    wrapper passes (per-device blocks for shard_map) and traced (as inside jit)."""
    found: list[tuple[dict[str, Value], Context]] = []
    for app in _applications(walker, info, frame, context, depth):
        binder = _BINDERS.get(app.api)
        if binder is None:
            continue
        for site in call_sites(walker, app, depth):
            locals_, inner = binder(walker.evaluator, app, site)
            found.append(
                (locals_, replace(inner, inside_function=True, inside_jit=True, call_site=site.where))
            )
    return found[:MAX_CONTEXTS]


def _applications(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> Iterator[Application]:
    """Applications of a wrapper to the function `info`: its decorators, and calls that name it
    as their first argument (`jax.shard_map(f, ...)`)."""
    for decorator in info.node.decorator_list:
        if isinstance(decorator, ast.Call):
            visit = Visit(decorator, frame, context, info.node, None)
            yield from _applied(walker, visit)
    if not any(info.name in first_arguments(walker.module, wrapper) for wrapper in _WRAPPER_NAMES):
        return
    for wrapper in _WRAPPER_NAMES:
        for visit in walker.calls_named(wrapper, depth):
            first = visit.call.args[0] if visit.call.args else None
            if not (isinstance(first, ast.Name) and first.id == info.name):
                continue
            for app in _applied(walker, visit):
                if isinstance(app.function, FunctionV) and app.function.func.node is info.node:
                    yield app


def _applied(walker: Walker, visit: Visit) -> Iterator[Application]:
    evaluator = walker.evaluator
    func = evaluator.evaluate(visit.call.func, visit.frame)
    for option in options(func):
        if isinstance(option, Ref) and option.qualname in (*WRAPPER_PARAMETERS, "functools.partial"):
            args, kwargs = _wrapper_arguments(evaluator, visit)
            app = application_of(evaluator, visit, option.qualname, list(args), dict(kwargs))
            if app is not None:
                yield app
            return


def _wrapper_arguments(evaluator: Evaluator, visit: Visit) -> tuple[list[Value], dict[str, Value]]:
    """The wrapper call's arguments, evaluated once per call, frame and (where they read it)
    evaluation state (`Reuse.answer_anywhere`): the walker asks for a function's applications
    in every context and at every depth it reaches the function (each pass, each context of
    the function around a `@jax.shard_map` body), and the contexts do not change the arguments
    (maxtext asked 608 times, 179 distinct questions: 77,000 of its 960,000 evaluation steps)."""
    frame = visit.frame
    key = Hashed(
        (
            "wrapper arguments",
            id(visit.call),
            frame_key(frame),
            id(frame.enclosing),
            evaluator.branching,
            id(evaluator.memos),  # the device count a branch states, if any (`BindingMemos.under`)
        )
    )
    return reuse_of(evaluator).answer_anywhere(
        key, frame.call_depth, (visit.call, frame), lambda: evaluator.call_arguments(visit.call, frame)
    )


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
