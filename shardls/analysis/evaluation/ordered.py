"""A function body run statement by statement, for the functions whose value depends on the
order of their statements: a `return` inside a loop (the first rule that matches wins,
EasyLM's `for rule, ps in rules: if re.search(rule, name) is not None: return ps`), or a
returned name built in a loop (`keys.append(str(key.key))` for each key of a path, then
`sep.join(keys)`) or set in a loop that can `break` (`found = spec; break`).

Elsewhere the evaluator reads a function lazily (a `return`'s value, with the names it reads
looked up at that point), which cannot tell the first match from the others: a loop variable is
then the choice of every item, and a list grown in a loop is unknown. Here a loop over a known
sequence runs once per item, in order, with its variables bound; an `if` whose test is known
takes its branch, and one whose test is not known takes both (its returns become options of a
choice, never a guess). The names the body assigns are kept as locals of the run, so every read
sees the value of that moment.

Only what this module understands is run: assignments to names (and to items of known lists and
dicts), `list.append` and the other mutations `known_values.mutated` knows, `if`, `for` over a
known sequence (with `break`, `continue` and `else`), `with open(...) as f:` or `path.open()` (a
file suppresses no exception, so its body runs as a plain block: a config loader reading its
file), `return`,
`raise`, `assert`, `pass`, and expressions. Any other statement (`while`, `try`, another `with`,
a loop over a value of unknown length,
a target it cannot bind), or more than `MAX_STATEMENTS` statements run, and the function is read
the lazy way instead (None).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import decided, mutated, truthiness, with_item
from shardls.analysis.node_memo import per_node
from shardls.analysis.values import Const, DictV, FileV, Seq, SetV, Unknown, Value

if TYPE_CHECKING:
    from shardls.analysis.definitions import FunctionInfo
    from shardls.analysis.evaluator import Evaluator

MAX_STATEMENTS = 4096
"""Statements one run executes at most (a loop's body counts once per item)."""

Env = Mapping[str, Value]
"""The locals of a run at one point. Never changed in place: the evaluator's memos are keyed by
the identity of the locals they were computed with."""

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
"""Statements that bind a name the evaluator reads from the scope (a nested `def`)."""


_NOT_RUN = (
    ast.Yield,
    ast.YieldFrom,
    ast.While,
    ast.Try,
    ast.AsyncWith,
    ast.AsyncFor,
    ast.Global,
    ast.Nonlocal,
    ast.Delete,
    ast.Match,
)
"""What makes a body not run in order, known before running it: a generator's call returns no
value, and `_Run` does not run these statements (the run would stop there, wasted)."""


class _Unsupported(Exception):
    """A statement this module does not run: the function is read lazily instead."""


@dataclass
class _Paths:
    """Where the runs of a block end up: going on after it (`normal`, merged into one set of
    locals), leaving the enclosing loop (`breaks`), or going on with its next item (`continues`)."""

    normal: Env | None
    breaks: list[Env] = field(default_factory=list)
    continues: list[Env] = field(default_factory=list)


@per_node
def in_order(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function's value depends on the order of its statements: it returns from
    inside a `for` loop, or returns a name it grows inside one (`_grown_names`). Never for a
    generator or a coroutine, whose call gives no returned value. Only statements are visited
    (every function called is asked), expressions only where they bind or return a name."""
    if isinstance(node, ast.AsyncFunctionDef):
        return False
    loop_names: set[str] = set()
    returned: set[str] = set()
    returns_in_loop = False
    stack: list[tuple[ast.stmt, int]] = [(stmt, _OUTSIDE) for stmt in node.body]
    while stack:
        stmt, loop = stack.pop()
        if isinstance(stmt, _NESTED):
            continue
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            returns_in_loop |= loop != _OUTSIDE
            returned.update(n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name))
        elif loop != _OUTSIDE:
            loop_names.update(_grown_names(stmt, loop == _BREAKING))
        inner = max(loop, _loop_kind(stmt))
        for block in ("body", "orelse", "finalbody", "handlers"):
            stack.extend((child, inner) for child in getattr(stmt, block, ()) if isinstance(child, ast.stmt))
        for handler in getattr(stmt, "handlers", ()):
            stack.extend((child, inner) for child in handler.body)
    if not (returns_in_loop or loop_names & returned):
        return False
    return not any(isinstance(n, _NOT_RUN) or _other_with(n) for n in _own_nodes(node))


def _other_with(node: ast.AST) -> bool:
    """A `with` other than of files opened by `open(...)` (whose manager may suppress exceptions)."""
    return isinstance(node, ast.With) and not all(_opens(item.context_expr) for item in node.items)


def _opens(node: ast.expr) -> bool:
    """`open(...)` or `path.open(...)` (whether it opens a file is known when the run meets it)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "open") or (
        isinstance(func, ast.Attribute) and func.attr == "open"
    )


_OUTSIDE, _LOOPING, _BREAKING = 0, 1, 2
"""Where a statement is: outside any `for` loop, in one, or in one that can `break` out."""


def _loop_kind(stmt: ast.stmt) -> int:
    """What a statement's body is in, as far as the statement itself decides."""
    if not isinstance(stmt, ast.For):
        return _OUTSIDE
    stack = list(stmt.body)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Break):
            return _BREAKING
        if not isinstance(current, (*_NESTED, ast.For, ast.While)):
            stack.extend(c for c in ast.iter_child_nodes(current) if isinstance(c, ast.stmt))
    return _LOOPING


def _grown_names(stmt: ast.stmt, breaking: bool) -> set[str]:
    """The names a statement in a loop grows or changes in place: `keys.append(...)`,
    `total += x`, `specs[name] = spec`; in a loop that can `break`, also a name assigned
    (`found = spec; break`: the pass that breaks decides it). A name assigned anew in every
    pass (`x = layer(x)`) is left to the lazy reading: running every such loop costs more than
    what it tells."""
    if breaking and isinstance(stmt, ast.Assign):
        return {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            {func.value.id} if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else set()
        )
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    if isinstance(stmt, ast.Assign):
        return {
            t.value.id for t in stmt.targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
        }
    return set()


def _own_nodes(node: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body, not of the functions and classes nested in it."""
    found: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, _NESTED):
            stack.extend(ast.iter_child_nodes(current))
    return found


def run_in_order(evaluator: Evaluator, info: FunctionInfo, called: Frame) -> Value | None:
    """The function's value, its body run in order from the call's locals (`called`); None when
    the body has a statement this module does not run."""
    run = _Run(evaluator, info, called)
    try:
        paths = run.block(info.node.body, called.locals)
    except _Unsupported:
        return None
    if paths.normal is not None:
        run.values.append(Const(None))  # the end of the body returns None
    if not run.values:
        return Unknown(f"no return of {info.qualname}() is reached")
    return run.values[0] if len(run.values) == 1 else evaluator.choice(run.values)


class _Run:
    """One run of a function body: the values its reachable `return`s give, in order."""

    def __init__(self, evaluator: Evaluator, info: FunctionInfo, called: Frame) -> None:
        self.evaluator = evaluator
        self.info = info
        self.called = called
        self.values: list[Value] = []
        self.statements_left = MAX_STATEMENTS

    def block(self, body: list[ast.stmt], env: Env) -> _Paths:
        paths = _Paths(env)
        for stmt in body:
            if paths.normal is None:
                break
            after = self.statement(stmt, paths.normal)
            paths = _Paths(after.normal, paths.breaks + after.breaks, paths.continues + after.continues)
        return paths

    def statement(self, stmt: ast.stmt, env: Env) -> _Paths:
        self.statements_left -= 1
        if self.statements_left < 0:
            raise _Unsupported
        if isinstance(stmt, ast.Return):
            self.values.append(Const(None) if stmt.value is None else self.eval(stmt.value, stmt, env))
            return _Paths(None)
        if isinstance(stmt, ast.Raise):
            return _Paths(None)
        if isinstance(stmt, ast.If):
            return self._if(stmt, env)
        if isinstance(stmt, ast.For):
            return self._for(stmt, env)
        if isinstance(stmt, ast.With):
            return self._with(stmt, env)
        if isinstance(stmt, ast.Break):
            return _Paths(None, breaks=[env])
        if isinstance(stmt, ast.Continue):
            return _Paths(None, continues=[env])
        if isinstance(stmt, ast.Assert):
            return _Paths(None if truthiness(self.eval(stmt.test, stmt, env)) is False else env)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            return _Paths(self._assign(stmt, env))
        if isinstance(stmt, ast.Expr):
            return _Paths(self._expression(stmt, env))
        if isinstance(stmt, ast.Pass):
            return _Paths(env)
        if isinstance(stmt, _DEFINING):
            names = {stmt.name} if not isinstance(stmt, (ast.Import, ast.ImportFrom)) else set()
            names |= {(a.asname or a.name).split(".")[0] for a in getattr(stmt, "names", ())}
            return _Paths({k: v for k, v in env.items() if k not in names})  # read from the scope
        raise _Unsupported

    def eval(self, node: ast.expr, stmt: ast.stmt, env: Env) -> Value:
        position = self.info.scope.order_of.get(id(stmt))
        return self.evaluator.eval(node, replace(self.called, position=position, locals=env, in_order=True))

    def _if(self, stmt: ast.If, env: Env) -> _Paths:
        truth = decided(self.eval(stmt.test, stmt, env))
        if truth is not None:
            return self.block(stmt.body if truth else stmt.orelse, env)
        with self.evaluator.branches():
            taken, other = self.block(stmt.body, env), self.block(stmt.orelse, env)
        return _Paths(
            self._merge([p for p in (taken.normal, other.normal) if p is not None]),
            taken.breaks + other.breaks,
            taken.continues + other.continues,
        )

    def _for(self, stmt: ast.For, env: Env) -> _Paths:
        items = self.evaluator.iterate(self.eval(stmt.iter, stmt, env), replace(self.called, locals=env))
        if not isinstance(items, Seq):
            raise _Unsupported  # a loop run an unknown number of times
        exits: list[Env] = []
        current: Env | None = env
        for item in items.items:
            if current is None:
                break
            body = self.block(stmt.body, _bound(stmt.target, item, current))
            exits.extend(body.breaks)
            current = self._merge([p for p in (body.normal, *body.continues) if p is not None])
        if current is not None and stmt.orelse:
            after = self.block(stmt.orelse, current)
            exits.extend(after.breaks)
            current = after.normal
        return _Paths(self._merge([p for p in (current, *exits) if p is not None]))

    def _with(self, stmt: ast.With, env: Env) -> _Paths:
        """`with open(path) as f:`: `f` is the opened file, and the body runs as a plain block."""
        for item in stmt.items:
            value = self.eval(item.context_expr, stmt, env)
            if not isinstance(value, FileV):
                raise _Unsupported  # `open` is not the builtin here, or its file is not known
            if item.optional_vars is not None:
                env = _bound(item.optional_vars, value, env)
        return self.block(stmt.body, env)

    def _assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, env: Env) -> Env:
        if stmt.value is None:
            return env  # `x: int` binds nothing
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name) or stmt.target.id not in env:
                raise _Unsupported
            before = env[stmt.target.id]
            value = self.eval(stmt.value, stmt, env)
            frame = replace(self.called, locals=env)
            return {**env, stmt.target.id: self.evaluator.binop(type(stmt.op), before, value, stmt, frame)}
        value = self.eval(stmt.value, stmt, env)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                env = self._item_written(target, value, stmt, env)
            elif not isinstance(target, ast.Attribute):  # `self.x = ...` is not a local
                env = _bound(target, value, env)
        return env

    def _item_written(self, target: ast.Subscript, value: Value, stmt: ast.stmt, env: Env) -> Env:
        if not isinstance(target.value, ast.Name) or target.value.id not in env:
            root = _subscripted(target)
            if root is not None and root in env:  # `a[i][j] = v` changes `a` in a way not followed
                return {**env, root: Unknown(f"an item of an item of {root!r} is written", symbol=root)}
            return env  # an item of something that is no local of the run
        key = self.eval(target.slice, stmt, env)
        return {**env, target.value.id: with_item(env[target.value.id], key, value)}

    def _expression(self, stmt: ast.Expr, env: Env) -> Env:
        call = stmt.value
        if not isinstance(call, ast.Call):
            return env  # a docstring
        func = call.func
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and isinstance(env.get(func.value.id), (Seq, DictV, SetV))
        ):
            return _passed_on(call, env)  # `self.log(...)` leaves `self` known
        name, method = func.value.id, func.attr
        if method in _PURE_METHODS:
            return env
        # A container's own method (`raw.update(model)`) changes it, not what it is given.
        args, kwargs = self.evaluator.call_arguments(call, replace(self.called, locals=env))
        after = mutated(env[name], method, args, kwargs, self.evaluator.limits.collection)
        return {**env, name: after or Unknown(f"{name!r} after .{method}()", symbol=name)}

    def _merge(self, envs: list[Env]) -> Env | None:
        """The locals after paths that meet again: a name that differs between them is the
        choice of its values, one missing from some path is unknown there."""
        if not envs:
            return None
        if all(e is envs[0] for e in envs):
            return envs[0]
        merged: dict[str, Value] = {}
        for name in {name for e in envs for name in e}:
            values = [e.get(name) for e in envs]
            known = [v for v in values if v is not None]
            if len(known) < len(values):
                merged[name] = Unknown(f"{name!r} is not assigned on every path", symbol=name)
            elif all(v is known[0] or v == known[0] for v in known):
                merged[name] = known[0]
            else:
                merged[name] = self.evaluator.choice(known)
        return merged


_PURE_METHODS = frozenset({"get", "keys", "values", "items", "copy", "index", "count"})
"""Methods of a list, dict or set that leave it as it was (a call of any other method that
`known_values.mutated` does not know makes the local unknown)."""


_READERS = frozenset({"print", "len", "sorted", "repr", "str", "isinstance"})
"""Functions that only read what they are given: a container passed to one is as it was."""


def _passed_on(call: ast.Call, env: Env) -> Env:
    """A statement `helper(raw)`, whose only use is what it does to its arguments: a list, dict or
    set of the run given to it may be changed there (a config loader's `user_init(raw_keys)`),
    so it is unknown after it, unless the callee only reads (`print`)."""
    if isinstance(call.func, ast.Name) and call.func.id in _READERS:
        return env
    given = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    given += [k.value for k in call.keywords]
    for node in given:
        if isinstance(node, ast.Name) and _mutable(env.get(node.id)):
            changed = Unknown(f"{node.id!r} may be changed by the call it is passed to", symbol=node.id)
            env = {**env, node.id: changed}
    return env


def _mutable(value: Value | None) -> bool:
    return isinstance(value, (DictV, SetV)) or (isinstance(value, Seq) and value.is_list)


def _subscripted(target: ast.Subscript) -> str | None:
    """The name at the root of nested subscripts (`a` of `a[i][j]`)."""
    node: ast.expr = target
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound(target: ast.expr, value: Value, env: Env) -> Env:
    """`env` with `target` bound to `value` (each name of a tuple target to its item)."""
    if isinstance(target, ast.Name):
        return {**env, target.id: value}
    if isinstance(target, (ast.Tuple, ast.List)):
        if any(isinstance(t, ast.Starred) for t in target.elts):
            raise _Unsupported
        if isinstance(value, Seq) and len(value.items) == len(target.elts):
            for inner, item in zip(target.elts, value.items):
                env = _bound(inner, item, env)
            return env
        for inner in target.elts:
            env = _bound(inner, Unknown("unpacking an unknown value"), env)
        return env
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        return env
    raise _Unsupported
