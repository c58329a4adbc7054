"""Calls: a call's arguments, the library's models of the functions it knows, and workspace
functions, whose value is that of the `return`s their arguments reach (once per function and
arguments), traced or not as their decorators say."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluation.choices import map_options
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import decided
from shardls.analysis.evaluation.ordered import in_order, run_in_order
from shardls.analysis.evaluation.unused import ignored_call_reason
from shardls.analysis.node_memo import per_node
from shardls.analysis.sharded.auto_axes import under_auto_axes, without_types
from shardls.analysis.sharded.jit_types import decorated_call
from shardls.analysis.sharded.manual import shard_mapped_function_call
from shardls.analysis.sharded.nnx_vmapped import vmapped_function_call
from shardls.analysis.traced_decorators import traced_by_decorator
from shardls.analysis.values import (
    BoundMethod,
    ClassV,
    Const,
    DictV,
    FunctionV,
    InstanceV,
    PartialV,
    Ref,
    Seq,
    StreamV,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


EMPTY_CALL = ast.Call(func=ast.Name("_"), args=[], keywords=[])
"""The call node given to the library for a call that has none in the source (a property read,
a constructor run by a recognizer)."""


def _eval_Call(evaluator: Evaluator, node: ast.Call, frame: Frame) -> Value:
    func = evaluator.eval(node.func, frame)
    ignored = ignored_call_reason(evaluator, func, node, frame)
    if ignored is not None:  # a library function not modelled: its arguments change nothing
        return Unknown(ignored)
    args: list[Value] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            spread = evaluator.iterate(evaluator.eval(arg.value, frame), frame)
            if not isinstance(spread, Seq):
                return Unknown("*args of unknown length")
            args.extend(spread.items)
            if len(args) > evaluator.limits.collection:
                return Unknown("too many arguments")
        else:
            args.append(evaluator.eval(arg, frame))
    kwargs: dict[str, Value] = {}
    for keyword in node.keywords:
        value = evaluator.eval(keyword.value, frame)
        if keyword.arg is None:
            if not isinstance(value, DictV):
                return Unknown("**kwargs of unknown contents")
            for k, v in zip(value.keys, value.values):
                if isinstance(k, Const) and isinstance(k.value, str):
                    kwargs[k.value] = v
        else:
            kwargs[keyword.arg] = value
    return map_options(evaluator, func, lambda f: evaluator.call(f, args, kwargs, node, frame))


def _eval_Lambda(evaluator: Evaluator, node: ast.Lambda, frame: Frame) -> Value:
    return Unknown("lambda")


def call(
    evaluator: Evaluator,
    func: Value,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call | None,
    frame: Frame,
) -> Value:
    call_node = node if node is not None else EMPTY_CALL
    if isinstance(func, Ref):
        result = evaluator.library.call(evaluator, func.qualname, args, kwargs, call_node, frame)
        return result if result is not None else Unknown(f"result of {func.qualname}()")
    if isinstance(func, FunctionV):
        mapped = shard_mapped_function_call(evaluator, func, args, kwargs, frame)
        if mapped is None and node is not None and func.func.node.decorator_list:
            mapped = vmapped_function_call(evaluator, func, args, kwargs, node, frame)
        if mapped is not None:
            return mapped
        result = evaluator.call_function(func, args, kwargs, frame)
        return decorated_call(evaluator, func, node, frame, args, kwargs, result)
    if isinstance(func, PartialV):
        return call(evaluator, func.func, [*func.args, *args], {**dict(func.kwargs), **kwargs}, node, frame)
    if isinstance(func, ClassV):
        return evaluator.instantiate(func.cls, args, kwargs, node, frame)
    if isinstance(func, BoundMethod):
        result = evaluator.library.method(evaluator, func, args, kwargs, call_node, frame)
        return result if result is not None else Unknown(f"result of .{func.name}()")
    if isinstance(func, InstanceV):  # `model(x)`: the class's `__call__`
        method = next(
            (k.methods["__call__"] for k in evaluator.mro(func.cls, frame) if "__call__" in k.methods), None
        )
        if method is not None:
            return evaluator.call_function(FunctionV(method, bound=func), args, kwargs, frame)
    # A library value called like a function (`jnp.float32(1.0)` calls a dtype): its `__call__`.
    result = evaluator.library.method(
        evaluator, BoundMethod(func, "__call__"), args, kwargs, call_node, frame
    )
    return result if result is not None else Unknown("call of an unknown value")


def call_function(
    evaluator: Evaluator, func: FunctionV, args: list[Value], kwargs: dict[str, Value], frame: Frame
) -> Value:
    info = func.func
    if not evaluator.within_call_depth(frame):
        return Unknown(f"calls nested too deeply in {info.qualname}()")
    if info.kind == "property":
        args = []
    locals_ = evaluator.bind_arguments(info, args, kwargs, func.bound, frame)
    returns = info.returns
    if not returns and not info.yields:
        return Const(None)
    if _recurs_on_nothing_new(info, locals_, frame):
        return Unknown(f"calls nested too deeply in {info.qualname}()")
    traced = traced_by_decorator(info.node)
    outside = evaluator.state.tracing  # the callee's reads are the call's
    evaluator.tracing = True if traced or outside else None if traced is None else outside
    called = callee_frame(func, locals_, frame)
    try:
        return _returned_once(
            evaluator, info, returns, called, (tuple(args), tuple(kwargs.items()), func.bound)
        )
    finally:
        evaluator.tracing = outside


def callee_frame(func: FunctionV, locals_: Mapping[str, Value], frame: Frame) -> Frame:
    """Where the body of `func` is evaluated when it is called at `frame` with `locals_` bound."""
    info = func.func
    return Frame(
        info.module,
        info.scope,
        info.segment,
        None,
        locals_,
        frame.call_depth + 1,
        func.closure,
        frame.callee_runs_at(),
    )


def _recurs_on_nothing_new(info: FunctionInfo, locals_: Mapping[str, Value], frame: Frame) -> bool:
    """Whether this is a call of a function from its own body (`frame`: where the call is
    evaluated, whose locals are the outer call's arguments, or those of the context the walker
    gives the body) that gives it nothing the outer call did not have: each argument the outer
    one (or an equal value), or unknown where the outer one was unknown too. The inner call
    would evaluate the same body knowing no more, and call itself again the same way, down to
    the call-depth limit: a helper that recurses into the fields of an undecided type
    (`update_slice(x.quant, ...)` under `if is_type(x, QuantArray)` with `x` unknown, gemma4)
    was evaluated once per level and branch, hundreds of times, each level's arguments
    differing from the last only by the reason or symbol of an unknown, so no memo answered.
    Its value is what that limit gives, without the descent. Only a direct call from the
    function's own body: the answer then depends on nothing but the outer call's arguments,
    which every memo of that evaluation is keyed by (`_returned_once`, the bindings' memos)."""
    function = frame.scope.function
    return function is not None and function.node is info.node and _nothing_new(info, locals_, frame.locals)


def _nothing_new(info: FunctionInfo, inner: Mapping[str, Value], outer: Mapping[str, Value]) -> bool:
    for param in info.params:
        now = inner.get(param.arg)
        before = outer.get(param.arg)
        if now is None or before is None:
            if now is not before:
                return False  # a default where the outer call had an argument, or the reverse
        elif (
            now is not before
            and not (isinstance(now, Unknown) and isinstance(before, Unknown))
            and now != before
        ):
            return False
    return True


def _returned_once(
    evaluator: Evaluator,
    info: FunctionInfo,
    returns: list[ast.Return],
    called: Frame,
    arguments: object,
) -> Value:
    """`_returned`, once per function, arguments and, where the evaluation reads them, evaluation
    state and call depth (`analysis/reuse.py`, `Reuse.answer_anywhere`): a helper called again
    with equal arguments (`cfg.mesh_shape()` in every statement) is not evaluated again."""
    from shardls.analysis.reuse import Hashed, reuse_of

    def compute() -> Value:
        if info.yields:
            return _generated(evaluator, info, called)
        ordered = run_in_order(evaluator, info, called) if in_order(info.node) else None
        return ordered if ordered is not None else _returned(evaluator, info, returns, called)

    try:
        key = Hashed(
            (
                id(info.node),
                arguments,
                id(called.enclosing),
                called.runs_at,
                evaluator.branching,
                id(evaluator.memos),  # the device count a branch states, if any (`BindingMemos.under`)
            )
        )
    except TypeError:
        return compute()
    return reuse_of(evaluator).answer_anywhere(key, called.call_depth, (info, called.enclosing), compute)


def _returned(evaluator: Evaluator, info: FunctionInfo, returns: list[ast.Return], called: Frame) -> Value:
    values: list[Value] = []
    guards = statement_guards(info.node)
    for ret in returns[: evaluator.limits.choices]:
        if not branches_taken(evaluator, info, guards.get(id(ret), ()), called):
            continue  # under an `if` decided against it with these arguments
        if ret.value is None:
            values.append(Const(None))
            continue
        values.append(evaluator.eval(ret.value, called.at(info.scope.order_of.get(id(ret)))))
    if not values:
        return Unknown(f"no return of {info.qualname}() is reached")
    return values[0] if len(values) == 1 else evaluator.choice(values)


def _generated(evaluator: Evaluator, info: FunctionInfo, called: Frame) -> Value:
    """A generator's call: its items are what its `yield` statements give, with the call's
    arguments, as a loop variable is the choice of the loop's items; their number stays unknown.
    A `yield` decided against by an `if` gives none; one inside an expression (`sent = yield x`),
    a bare `yield` and a `yield from` give an item not known here."""
    guards = statement_guards(info.node)
    items: list[Value] = []
    for node, statement in info.yields[: evaluator.limits.choices]:
        if not branches_taken(evaluator, info, guards.get(id(statement), ()), called):
            continue
        if isinstance(node, ast.YieldFrom) or node.value is None or not _stands_alone(node, statement):
            items.append(Unknown(f"an item of {info.qualname}()"))
            continue
        items.append(evaluator.eval(node.value, called.at(info.scope.order_of.get(id(statement)))))
    if not items:
        return StreamV(Unknown(f"no yield of {info.qualname}() is reached"))
    return StreamV(items[0] if len(items) == 1 else evaluator.choice(items))


def _stands_alone(node: ast.Yield, statement: ast.stmt) -> bool:
    """`yield x` as a statement of its own, whose value is evaluated where the statement is."""
    return isinstance(statement, ast.Expr) and statement.value is node


def branches_taken(
    evaluator: Evaluator, info: FunctionInfo, guards: tuple[tuple[ast.If, bool], ...], called: Frame
) -> bool:
    """False when one of the `if` tests around a statement (a `return`, a `self.x = ...`) is
    decided against its branch. `called` is the function's own frame (its locals)."""
    for statement, branch in guards:
        test_frame = called.at(info.scope.order_of.get(id(statement)))
        if decided(evaluator.eval(statement.test, test_frame)) is (not branch):
            return False
    return True


def call_arguments(
    evaluator: Evaluator, call: ast.Call, frame: Frame
) -> tuple[list[Value], dict[str, Value]]:
    """A call's positional and keyword argument values, each its own question: `*args` of
    known length spread (else one unknown argument stands for them), `**kwargs` of known
    string keys spread (else left out)."""
    args: list[Value] = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            spread = evaluator.iterate(evaluator.evaluate(arg.value, frame), frame)
            args.extend(spread.items if isinstance(spread, Seq) else (Unknown("*args"),))
        else:
            args.append(evaluator.evaluate(arg, frame))
    kwargs: dict[str, Value] = {}
    for keyword in call.keywords:
        value = evaluator.evaluate(keyword.value, frame)
        if keyword.arg is not None:
            kwargs[keyword.arg] = value
        elif isinstance(value, DictV):
            for key, item in zip(value.keys, value.values):
                if isinstance(key, Const) and isinstance(key.value, str):
                    kwargs[key.value] = item
    return args, kwargs


def bind_arguments(
    evaluator: Evaluator,
    info: FunctionInfo,
    args: list[Value],
    kwargs: dict[str, Value],
    bound: Value | None,
    frame: Frame,
) -> dict[str, Value]:
    """Map call arguments to parameter names; what is missing falls back to defaults lazily."""
    node_args = info.node.args
    positional = [a.arg for a in list(node_args.posonlyargs) + list(node_args.args)]
    locals_: dict[str, Value] = {}
    queue = list(args)
    if bound is not None and positional and info.kind != "staticmethod":
        locals_[positional[0]] = bound
        positional = positional[1:]
    for name in positional:
        if queue:
            locals_[name] = queue.pop(0)
    if node_args.vararg is not None:
        locals_[node_args.vararg.arg] = Seq(tuple(queue))
    extra: dict[str, Value] = {}
    for name, value in kwargs.items():
        if name in positional or any(a.arg == name for a in node_args.kwonlyargs):
            locals_[name] = value
        else:
            extra[name] = value
    if node_args.kwarg is not None:
        locals_[node_args.kwarg.arg] = DictV(tuple(Const(k) for k in extra), tuple(extra.values()))
    return without_types(locals_) if under_auto_axes(info.node) else locals_


@per_node
def statement_guards(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> dict[int, tuple[tuple[ast.If, bool], ...]]:
    """For each statement of a function (by id), the `if` statements it is under and whether in
    their body (True) or `else` (False): a call whose arguments decide a test does not return
    from the other branch (`if decode: return ...`), nor does a constructor set an attribute
    there (`if with_scale: self.scale = ...`). A statement after an `if` whose body always
    returns (or raises) runs only when the test is false, as if it were in its `else`."""
    found: dict[int, tuple[tuple[ast.If, bool], ...]] = {}
    stack: list[tuple[ast.AST, tuple[tuple[ast.If, bool], ...]]] = _in_order(node.body, ())
    while stack:
        current, guards = stack.pop()
        if isinstance(current, ast.stmt):
            found[id(current)] = guards
        if isinstance(current, ast.If):
            stack.extend(_in_order(current.body, (*guards, (current, True))))
            stack.extend(_in_order(current.orelse, (*guards, (current, False))))
        elif not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            # Not into expressions: they hold no statement (and are most of a model's nodes).
            stack.extend(
                (child, guards) for child in ast.iter_child_nodes(current) if not isinstance(child, ast.expr)
            )
    return found


def _in_order(
    block: list[ast.stmt], guards: tuple[tuple[ast.If, bool], ...]
) -> list[tuple[ast.AST, tuple[tuple[ast.If, bool], ...]]]:
    """The statements of a block with their guards, those after `if test: return ...` (with no
    `else`) also guarded by the test being false."""
    found: list[tuple[ast.AST, tuple[tuple[ast.If, bool], ...]]] = []
    for stmt in block:
        found.append((stmt, guards))
        if (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and isinstance(stmt.body[-1], (ast.Return, ast.Raise))
        ):
            guards = (*guards, (stmt, False))
    return found


EXPRESSIONS: ExpressionHandlers = {
    ast.Call: _eval_Call,
    ast.Lambda: _eval_Lambda,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
