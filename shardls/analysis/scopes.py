"""Name bindings per scope, with the bindings that reach each statement.

One pass over a scope's statements records, for every name, which bindings can reach each point:
an assignment replaces the candidates, an if/else or a loop merges them (both branches stay
possible). Function and class bodies get their own scope, built only when something needs it.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import re
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from shardls.analysis.node_memo import per_node
from shardls.analysis.source import ParsedSource, Segment

if TYPE_CHECKING:
    from shardls.analysis.scope_edit import ModuleScope, Window

_CALLED_NAME = re.compile(r"(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_]*+)\s*\(")
"""A name followed by `(`. It finds what `([A-Za-z_][A-Za-z0-9_]*)\\s*\\(` finds (no shorter run
of name characters can be followed by `(`), without trying every suffix of every name that is
not called: a quarter of the time of that expression, which searched every top-level statement
of every module read (1.6 s over maxtext's)."""


@functools.lru_cache(maxsize=20_000)
def called_names(text: str) -> frozenset[str]:
    """Names followed by `(` in a segment; cached by text, so unchanged segments cost nothing."""
    return frozenset(_CALLED_NAME.findall(text))


@dataclass(frozen=True, eq=False)
class Binding:
    name: str
    kind: str
    """assign | annotation | augassign | setitem | mutate | def | class | import | importfrom | for |
    with | param | except | rank (`mutate`: a method call that changes the object, `dims.append(n)`;
    `rank`: a statement that fixes the rank of the name's value, `b, s = x.shape`)"""
    node: ast.AST
    """The statement (or def/class/alias/arg) that binds the name."""
    value: ast.expr | None
    """The bound expression, if any (for `for`, the iterable; for augassign, the right operand)."""
    segment: Segment
    order: int
    unpack: tuple[int | str, ...] = ()
    """Path into a tuple target: `a, (b, *c) = v` binds b at (1, 0) and c at (1, 'star1')."""
    statement: ast.stmt | None = None
    """For imports: the Import/ImportFrom statement of the alias in `node`."""
    guards: tuple[tuple[ast.If, bool], ...] = ()
    """The `if` branches this binding reaches through (the if statement and which branch): when a
    test can be decided, the bindings of the branch not taken are dropped."""
    target: ast.Subscript | None = None
    """For `setitem`: the item written (`kwargs["shd_cfg"] = ...` rebinds `kwargs` with it)."""
    in_loop: bool = False
    """Written inside a `for` or `while` body: after the loop the name holds whatever the
    iterations made of it, which is not known from one pass (a list `.append`ed in a loop)."""

    @property
    def line(self) -> int:
        return self.segment.abs_line(getattr(self.node, "lineno", 1))


Candidates = tuple[Binding, ...]


@dataclass(eq=False)
class Scope:
    kind: str
    """module | class | function"""
    parent: Scope | None
    history: dict[str, list[tuple[int, Candidates]]] = field(default_factory=dict)
    final: dict[str, Candidates] = field(default_factory=dict)
    order_of: dict[int, int] = field(default_factory=dict)
    """id(statement) -> its position in the pass."""
    module: ModuleInfo | None = None
    function: FunctionInfo | None = None
    """The function whose body this scope is."""
    owner: ClassInfo | None = None
    """The class whose body this scope is."""
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    """Every binding of each name, in order (what a cached result that read the name depends on)."""
    _reaching: dict[tuple[str, int], Candidates] = field(default_factory=dict, init=False, repr=False)
    """`lookup`'s answers by name and position: every read of a name asks, a million times in
    a check of maxtext, and the scope does not change once built."""
    _superseded: dict[tuple[str, int], bool] = field(default_factory=dict, init=False, repr=False)
    """`superseded`'s answers, likewise (every read of a local asks)."""

    def binding_key(self, name: str) -> tuple[tuple[int, int], ...]:
        """Identity of everything that can bind `name` here, with where it sits in the file.

        Equal keys mean a cached result that read `name` is still right: the bindings are the
        same AST objects (segments are cached by text) at the same lines.
        """
        return tuple((id(b.node), b.segment.first_line) for b in self.bindings.get(name, ()))

    def lookup(self, name: str, position: int | None) -> Candidates:
        """Bindings of `name` that can reach `position` (None: after the whole scope ran)."""
        if position is None:
            return self.final.get(name, ())
        key = (name, position)
        found = self._reaching.get(key)
        if found is None:
            entries = self.history.get(name, [])
            index = bisect.bisect_left(entries, position, key=_order) - 1
            found = self._reaching[key] = entries[index][1] if index >= 0 else ()
        return found

    def superseded(self, name: str, position: int) -> bool:
        """Whether a local `name` no longer holds the value it was given by `position`: an item
        of it was written (`kwargs["x"] = v`: the value then comes from that write, which starts
        from the local itself), or it is a parameter assigned again (`k, s = k if ... else (k,
        None)`: the argument is no longer its value)."""
        key = (name, position)
        found = self._superseded.get(key)
        if found is None:
            reaching = self.lookup(name, position)
            found = any(b.kind == "setitem" for b in reaching) or (
                self.function is not None
                and any(b.kind == "param" for b in self.bindings.get(name, ()))
                and any(b.kind != "param" for b in reaching)
            )
            self._superseded[key] = found
        return found


def _order(entry: tuple[int, Candidates]) -> int:
    return entry[0]


MAX_CANDIDATES = 64
"""Beyond this many bindings of one name at a join, copies of one binding are joined
(`_collapsed`). A binding that reaches a join through both branches, each marked by an inner `if`
of its own, is two copies with different guards, so copies double at each such `if` in turn
(TransformerEngine's 1,300-line `get_attention_backend`: the scope of one function never built)."""


def _collapsed(candidates: Candidates) -> Candidates:
    """The copies of each binding as one, with the guards every copy has: it reaches the join
    wherever one of them did (never dropped where a copy would have been kept), at the price of
    options that no path pairs (a copy's own guards no longer exclude them)."""
    copies: dict[tuple[int, tuple[int | str, ...], str, bool, int], list[Binding]] = {}
    for binding in candidates:
        key = (id(binding.node), binding.unpack, binding.kind, binding.in_loop, id(binding.target))
        copies.setdefault(key, []).append(binding)
    joined: list[Binding] = []
    for first, *others in copies.values():
        shared = tuple(g for g in first.guards if all(g in other.guards for other in others))
        joined.append(first if not others else dataclasses.replace(first, guards=shared))
    return tuple(joined)


class ScopeBuilder:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.counter = 0
        self.state: dict[str, Candidates] = {}
        self.guards: list[tuple[ast.If, bool]] = []
        self.loops = 0

    def bind(self, binding: Binding, replace: bool = True) -> None:
        if self.guards:
            binding = dataclasses.replace(binding, guards=binding.guards + tuple(self.guards))
        if self.loops and binding.kind in ("augassign", "setitem", "mutate"):
            binding = dataclasses.replace(binding, in_loop=True)
        self.scope.bindings.setdefault(binding.name, []).append(binding)
        current = self.state.get(binding.name, ())
        new = (binding,) if replace else current + (binding,)
        self._set(binding.name, new)

    def _set(self, name: str, candidates: Candidates) -> None:
        self.state[name] = candidates
        self.scope.history.setdefault(name, []).append((self.counter, candidates))

    def restart(self, before: dict[str, Candidates]) -> None:
        """Go back to the bindings of `before` to run another branch of the same statement (the
        `else` of an `if`, another `except` or `case`): the names the previous branch bound are recorded as holding
        `before`'s bindings again, so that a question asked inside this branch never meets that
        branch's bindings (`x = a` in the body of an `if` does not reach its `else`: it was read
        there, and decided an error JAX never raises)."""
        self.counter += 1
        for name, candidates in list(self.state.items()):
            if before.get(name, ()) is not candidates:
                self._set(name, before.get(name, ()))
        self.state = dict(before)

    def next_order(self, stmt: ast.AST) -> int:
        self.counter += 1
        self.scope.order_of[id(stmt)] = self.counter
        return self.counter

    def merge(
        self,
        before: dict[str, Candidates],
        branches: list[dict[str, Candidates]],
        guards: list[tuple[ast.If, bool]] | None = None,
    ) -> None:
        """Join the branches' bindings. With `guards` (an if/else), a binding that reaches the join
        through one branch only is marked with that branch, so a decided test can drop it."""
        self.counter += 1
        names = set(before).union(*branches)
        merged: dict[str, Candidates] = {}
        for name in names:
            unchanged = before.get(name, ())
            per_branch = [branch.get(name, unchanged) for branch in branches]
            if all(candidates is unchanged for candidates in per_branch):
                merged[name] = unchanged  # what every branch left as it was (most names of a long scope)
                continue
            seen: dict[int, Binding] = {}
            for index, candidates in enumerate(per_branch):
                for binding in candidates:
                    if id(binding) in seen:
                        continue
                    only_here = not any(binding in other for j, other in enumerate(per_branch) if j != index)
                    marked = binding
                    if guards is not None and only_here and guards[index] not in binding.guards:
                        marked = dataclasses.replace(binding, guards=binding.guards + (guards[index],))
                    seen[id(binding)] = marked
            joined = tuple(seen.values())
            merged[name] = _collapsed(joined) if len(joined) > MAX_CANDIDATES else joined
        for name, candidates in merged.items():
            if candidates != self.state.get(name):
                self._set(name, candidates)
        self.state = merged

    def _mutated(self, expression: ast.expr) -> str | None:
        """The variable a statement like `dims.append(n)` changes: a mutating method called on a
        name this scope assigned (not a module, class or function: `nnx.update(...)`)."""
        name = mutated_name(expression)
        candidates = self.state.get(name, ()) if name is not None else ()
        if candidates and all(b.kind in _VALUE_KINDS for b in candidates):
            return name
        return None

    def run(self, body: list[ast.stmt] | tuple[ast.stmt, ...], segment: Segment) -> None:
        for stmt in body:
            self.statement(stmt, segment)

    def statement(self, stmt: ast.stmt, segment: Segment) -> None:
        order = self.next_order(stmt)
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                self.target(target, "assign", stmt, stmt.value, segment, order, ())
            self._rank_fixed(stmt, segment, order)
        elif isinstance(stmt, ast.Assert):
            self._rank_fixed(stmt, segment, order)
        elif isinstance(stmt, ast.AnnAssign):
            if isinstance(stmt.target, ast.Name):
                kind = "assign" if stmt.value is not None else "annotation"
                self.bind(Binding(stmt.target.id, kind, stmt, stmt.value, segment, order))
            elif stmt.value is not None:
                self.target(stmt.target, "assign", stmt, stmt.value, segment, order, ())
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                self.bind(Binding(stmt.target.id, "augassign", stmt, stmt.value, segment, order))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(Binding(stmt.name, "def", stmt, None, segment, order))
        elif isinstance(stmt, ast.ClassDef):
            self.bind(Binding(stmt.name, "class", stmt, None, segment, order))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            kind = "import" if isinstance(stmt, ast.Import) else "importfrom"
            for alias in stmt.names:
                if alias.name == "*":
                    continue
                name = alias.asname or (alias.name.split(".")[0] if kind == "import" else alias.name)
                self.bind(Binding(name, kind, alias, None, segment, order, (), stmt))
                self.scope.order_of[id(alias)] = order
        elif isinstance(stmt, ast.Expr) and self._mutated(stmt.value) is not None:
            changed = self._mutated(stmt.value)
            assert changed is not None and isinstance(stmt.value, ast.Call)
            self.bind(Binding(changed, "mutate", stmt, stmt.value, segment, order))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            before = dict(self.state)
            self.target(stmt.target, "for", stmt, stmt.iter, segment, order, ())
            self.loops += 1
            self.run(stmt.body, segment)
            self.loops -= 1
            after_body = dict(self.state)
            self.merge(before, [after_body, before])  # `else` runs after any number of iterations
            self.run(stmt.orelse, segment)
            self.merge(before, [after_body, dict(self.state), before])
        elif isinstance(stmt, ast.While):
            before = dict(self.state)
            self.loops += 1
            self.run(stmt.body, segment)
            self.loops -= 1
            after_body = dict(self.state)
            self.merge(before, [after_body, before])  # `else` runs after any number of iterations
            self.run(stmt.orelse, segment)
            self.merge(before, [after_body, dict(self.state), before])
        elif isinstance(stmt, ast.If):
            before = dict(self.state)
            self.guards.append((stmt, True))
            self.run(stmt.body, segment)
            self.guards.pop()
            after_body = dict(self.state)
            self.restart(before)
            self.guards.append((stmt, False))
            self.run(stmt.orelse, segment)
            self.guards.pop()
            self.merge(before, [after_body, dict(self.state)], [(stmt, True), (stmt, False)])
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self.target(item.optional_vars, "with", stmt, item.context_expr, segment, order, ())
            self.run(stmt.body, segment)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            before = dict(self.state)
            self.run(stmt.body, segment)  # type: ignore[attr-defined]
            after_body = dict(self.state)
            self.run(stmt.orelse, segment)  # type: ignore[attr-defined]
            outcomes = [dict(self.state)]
            # A handler runs after any part of the body: what it bound, or what was there before.
            self.merge(before, [after_body, before])
            caught = dict(self.state)
            for handler in stmt.handlers:  # type: ignore[attr-defined]
                self.restart(caught)
                if handler.name:
                    self.bind(Binding(handler.name, "except", handler, None, segment, order))
                self.run(handler.body, segment)
                outcomes.append(dict(self.state))
            self.merge(before, outcomes)
            self.run(stmt.finalbody, segment)  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.Match):
            before = dict(self.state)
            outcomes = []
            for case in stmt.cases:
                self.restart(before)
                self.run(case.body, segment)
                outcomes.append(dict(self.state))
            self.merge(before, outcomes + [before])

    def _rank_fixed(self, stmt: ast.Assign | ast.Assert, segment: Segment, order: int) -> None:
        """`b, s, d = x.shape` or `assert x.ndim == 3`: below it, `x` has that rank (Python raises
        otherwise), so the name is bound again, to its value with that rank (a `rank` binding:
        see `evaluation.bindings`). Only a name this scope already binds (a local or parameter)."""
        name = rank_fixed_name(stmt)
        if name is not None and self.state.get(name):
            self.bind(Binding(name, "rank", stmt, None, segment, order))

    def target(
        self,
        target: ast.expr,
        kind: str,
        stmt: ast.AST,
        value: ast.expr | None,
        segment: Segment,
        order: int,
        path: tuple[int | str, ...],
    ) -> None:
        if isinstance(target, ast.Name):
            self.bind(Binding(target.id, kind, stmt, value, segment, order, path))
        elif isinstance(target, ast.Attribute) and dotted_name(target.value):
            # `cls.config = Config.big()` then `Model(cls.config)`: read back as the name
            # `cls.config` (see `Evaluator.assigned_attribute`); `config.model.heads = 8` in a
            # `get_config()` as `config.model.heads` (see `library/config_dict.py`).
            self.bind(
                Binding(
                    attribute_key(dotted_name(target.value), target.attr),
                    kind,
                    stmt,
                    value,
                    segment,
                    order,
                    path,
                )
            )
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.bind(Binding(target.value.id, "setitem", stmt, value, segment, order, path, target=target))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    self.target(element.value, kind, stmt, value, segment, order, path + (f"star{i}",))
                else:
                    self.target(element, kind, stmt, value, segment, order, path + (i,))
        elif isinstance(target, ast.Starred):
            self.target(target.value, kind, stmt, value, segment, order, path)

    def finish(self) -> Scope:
        self.scope.final = dict(self.state)
        return self.scope


def rank_fixed_name(stmt: ast.stmt) -> str | None:
    """The name whose rank the statement fixes: `a, b = name.shape` (no starred target, `name` not
    among the targets), `assert name.ndim == N` or `assert len(name.shape) == N`."""
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Tuple | ast.List):
            return None
        elements = stmt.targets[0].elts
        value = stmt.value
        if not (
            isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name)
        ):
            return None
        name = value.value.id
        if any(isinstance(e, ast.Starred) or (isinstance(e, ast.Name) and e.id == name) for e in elements):
            return None
        return name
    if isinstance(stmt, ast.Assert):
        return asserted_rank(stmt.test)[0]
    return None


def asserted_rank(test: ast.expr) -> tuple[str | None, int]:
    """`(name, N)` for a test `name.ndim == N` or `len(name.shape) == N` (N from 0 to 32);
    `(None, 0)` for any other test."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and type(test.comparators[0].value) is int
        and 0 <= test.comparators[0].value <= 32
    ):
        return None, 0
    left = test.left
    if isinstance(left, ast.Attribute) and left.attr == "ndim" and isinstance(left.value, ast.Name):
        return left.value.id, test.comparators[0].value
    if (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "len"
        and len(left.args) == 1
        and not left.keywords
        and isinstance(left.args[0], ast.Attribute)
        and left.args[0].attr == "shape"
        and isinstance(left.args[0].value, ast.Name)
    ):
        return left.args[0].value.id, test.comparators[0].value
    return None, 0


MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update", "setdefault"}
    | {"add", "discard", "popitem"}
)
"""Methods of list, dict and set that change the object they are called on."""


_VALUE_KINDS = frozenset({"assign", "augassign", "setitem", "mutate"})
"""Bindings that give a name a value a method can change in place."""


def mutated_name(expression: ast.expr) -> str | None:
    """The local changed by a statement like `dims.append(n)` (a mutating method of a name)."""
    if not isinstance(expression, ast.Call) or not isinstance(expression.func, ast.Attribute):
        return None
    receiver = expression.func.value
    if expression.func.attr in MUTATORS and isinstance(receiver, ast.Name):
        return receiver.id
    return None


def build_scope(
    scope: Scope,
    parts: list[tuple[Segment, tuple[ast.stmt, ...] | list[ast.stmt]]],
    params: list[Binding] | None = None,
) -> Scope:
    builder = ScopeBuilder(scope)
    for binding in params or ():
        builder.bind(binding)
    for segment, body in parts:
        builder.run(body, segment)
    return builder.finish()


@dataclass(eq=False)
class ModuleInfo:
    path: str
    name: str | None
    """Dotted module name within the workspace, when known."""
    source: ParsedSource
    previous: weakref.ref[ModuleInfo] | None = field(default=None, repr=False)
    """The module of the file's previous text (while it lives): its scope and call index are
    made from that one's, finding again only what the edited segments hold (`scope_edit`)."""
    searches: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict, repr=False)
    """Answers of searches of the module's text (`call_syntax.first_arguments`), kept with it: a
    cache keyed by modules kept every version of an edited file alive."""
    class_infos: dict[tuple[int, int, int], ClassInfo] = field(default_factory=dict, repr=False)
    """The infos of the module's classes, by the node, segment and enclosing scope they are
    made from (`Evaluator.class_info`): what they find (their scope, methods, fields) rests on
    nothing else, so every file that evaluates the module shares them instead of building the
    scopes of its classes and functions again (a tenth of a serial check of maxtext)."""
    function_infos: dict[tuple[int, int, int], FunctionInfo] = field(default_factory=dict, repr=False)
    """The infos of the module's functions (not methods, whose class holds them), likewise."""

    def changed_since(self, earlier: ModuleInfo) -> tuple[frozenset[str], frozenset[str]] | None:
        """The names whose bindings, and the names whose callers, may differ from `earlier`'s,
        when this module's scope and call index were made from `earlier`'s (None otherwise:
        anything may differ)."""
        if self.previous is None or self.previous() is not earlier:
            return None
        changed, callers = self.module_scope.changed, self._calls[1]
        if changed is None or callers is None:
            return None
        return changed, callers

    def callers_key(self, callee: str) -> tuple[tuple[int, int], ...]:
        """The segments that call `callee` (by their trees and lines): what a search of its
        callers read."""
        segments = self.source.segments
        return tuple((id(segments[i].body), segments[i].first_line) for i in self.call_index.get(callee, ()))

    @property
    def scope(self) -> Scope:
        return self.module_scope.scope

    @cached_property
    def module_scope(self) -> ModuleScope:
        """The scope, made from the previous module's when the edit allows (`scope_edit`)."""
        from shardls.analysis.scope_edit import module_scope, scope_after_edit

        edit = self._edited_from("module_scope")
        if edit is not None:
            previous, window = edit
            edited = scope_after_edit(previous.module_scope, previous.source.segments, self, window)
            if edited is not None:
                return edited
        return module_scope(self)

    def _edited_from(self, made: str) -> tuple[ModuleInfo, Window] | None:
        """The previous module and the segments the edit changed, when the previous module has
        already made `made` (a cached property), which this one's can then be patched from."""
        from shardls.analysis.scope_edit import edited_window

        previous = self.previous() if self.previous is not None else None
        if previous is None or made not in previous.__dict__:
            return None
        return previous, edited_window(previous.source, self.source)

    @property
    def call_index(self) -> dict[str, tuple[int, ...]]:
        """Name -> indices of the segments that contain `name(`; finds callers without rescanning."""
        return self._calls[0]

    @cached_property
    def _calls(self) -> tuple[dict[str, tuple[int, ...]], frozenset[str] | None]:
        """The call index, and the names whose callers may differ from the previous module's
        when it was made from that one's (None: built from scratch)."""
        from shardls.analysis.scope_edit import call_index_after_edit

        edit = self._edited_from("_calls")
        if edit is not None:
            previous, window = edit
            edited = call_index_after_edit(previous.call_index, previous.source.segments, self, window)
            if edited is not None:
                return edited
        index: dict[str, list[int]] = {}
        for number, segment in enumerate(self.source.segments):
            for name in called_names(segment.text):
                index.setdefault(name, []).append(number)
        return {name: tuple(numbers) for name, numbers in index.items()}, None


@dataclass(eq=False)
class FunctionInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    module: ModuleInfo
    segment: Segment
    parent: Scope
    owner: ClassInfo | None = None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def qualname(self) -> str:
        return f"{self.owner.name}.{self.name}" if self.owner else self.name

    @cached_property
    def decorators(self) -> tuple[str, ...]:
        return tuple(dotted_name(d.func if isinstance(d, ast.Call) else d) for d in self.node.decorator_list)

    @property
    def kind(self) -> str:
        """function | method | classmethod | staticmethod | property"""
        for decorator in self.decorators:
            last = decorator.rsplit(".", 1)[-1]
            if last in ("classmethod", "staticmethod", "property", "cached_property"):
                return "property" if last.endswith("property") else last
        return "method" if self.owner else "function"

    @cached_property
    def params(self) -> list[ast.arg]:
        args = self.node.args
        ordered = list(args.posonlyargs) + list(args.args)
        if args.vararg:
            ordered.append(args.vararg)
        ordered.extend(args.kwonlyargs)
        if args.kwarg:
            ordered.append(args.kwarg)
        return ordered

    def default_of(self, param: str) -> ast.expr | None:
        args = self.node.args
        positional = list(args.posonlyargs) + list(args.args)
        offset = len(positional) - len(args.defaults)
        for i, arg in enumerate(positional):
            if arg.arg == param and i >= offset:
                return args.defaults[i - offset]
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            if arg.arg == param:
                return default
        return None

    @cached_property
    def scope(self) -> Scope:
        params = [Binding(arg.arg, "param", arg, None, self.segment, 0) for arg in self.params]
        scope = Scope("function", self.parent, module=self.module, function=self)
        return build_scope(scope, [(self.segment, self.node.body)], params)

    @cached_property
    def returns(self) -> list[ast.Return]:
        return [node for node, _ in self._own() if isinstance(node, ast.Return)]

    @cached_property
    def yields(self) -> list[tuple[ast.Yield | ast.YieldFrom, ast.stmt]]:
        """The `yield`s of the function's own body, each with the statement it is in, in the
        order of the text: the function is a generator when there is one."""
        found = [(node, stmt) for node, stmt in self._own() if isinstance(node, (ast.Yield, ast.YieldFrom))]
        return sorted(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset))

    def _own(self) -> Iterator[tuple[ast.AST, ast.stmt]]:
        """The nodes of the function's own body (not of the functions, classes and lambdas
        nested in it), each with the statement it is in."""
        stack: list[tuple[ast.AST, ast.stmt]] = [(stmt, stmt) for stmt in self.node.body]
        while stack:
            node, stmt = stack.pop()
            yield node, stmt
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(
                    (child, child if isinstance(child, ast.stmt) else stmt)
                    for child in ast.iter_child_nodes(node)
                )


@dataclass(eq=False)
class ClassInfo:
    node: ast.ClassDef
    module: ModuleInfo
    segment: Segment
    parent: Scope

    @property
    def name(self) -> str:
        return self.node.name

    @cached_property
    def scope(self) -> Scope:
        return build_scope(
            Scope("class", self.parent, module=self.module, owner=self), [(self.segment, self.node.body)]
        )

    @cached_property
    def decorators(self) -> tuple[str, ...]:
        return tuple(dotted_name(d.func if isinstance(d, ast.Call) else d) for d in self.node.decorator_list)

    @cached_property
    def base_names(self) -> tuple[str, ...]:
        return tuple(dotted_name(b) for b in self.node.bases)

    @cached_property
    def field_names(self) -> tuple[str, ...]:
        """Annotated class attributes in order: the __init__ parameters of a dataclass or NamedTuple."""
        names = []
        for stmt in self.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                annotation = ast.unparse(stmt.annotation) if stmt.annotation else ""
                if "ClassVar" not in annotation:
                    names.append(stmt.target.id)
        return tuple(names)

    @cached_property
    def methods(self) -> dict[str, FunctionInfo]:
        found = {}
        for stmt in self.node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[stmt.name] = FunctionInfo(stmt, self.module, self.segment, self.scope, self)
        return found

    @cached_property
    def self_assignments(self) -> dict[str, list[tuple[FunctionInfo, ast.stmt]]]:
        """`self.x = ...` in the methods that build an instance (`__init__`, `__post_init__`, `setup`)."""
        found: dict[str, list[tuple[FunctionInfo, ast.stmt]]] = {}
        for method_name in ("__init__", "__post_init__", "setup"):
            method = self.methods.get(method_name)
            if method is None:
                continue
            for node in ast.walk(method.node):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            found.setdefault(target.attr, []).append((method, node))
                elif isinstance(node, ast.Call) and dotted_name(node.func) in (
                    "object.__setattr__",
                    "setattr",
                ):
                    args = node.args
                    if (
                        len(args) == 3
                        and isinstance(args[1], ast.Constant)
                        and isinstance(args[1].value, str)
                    ):
                        found.setdefault(args[1].value, []).append((method, ast.Expr(node)))
        return found


def attribute_key(name: str, attr: str) -> str:
    """The binding name of an attribute assigned on a name (`self.mesh = ...`)."""
    return f"{name}.{attr}"


def dotted_name(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain; '' otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


_JIT_DECORATORS = ("jit", "shard_map")
_TRACING_DECORATORS = (*_JIT_DECORATORS, "vmap", "pmap", "grad", "checkpoint", "remat", "scan")
_PLAIN_DECORATORS = frozenset(
    {"property", "staticmethod", "classmethod", "functools.cache", "functools.wraps"}
)


@per_node
def traced_by_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool | None:
    """Whether calling the function runs its body under a JAX trace: True for `@jax.jit`,
    `@partial(jax.jit, ...)`, `@nnx.jit`, `@jax.vmap`, `@jax.checkpoint`, ...; False when it has
    no decorator that could change it; None for other decorators (one may well be a jit)."""
    decorators = [] if isinstance(node, ast.Lambda) else node.decorator_list
    texts = [ast.unparse(d) for d in decorators]
    if any(word in text for text in texts for word in _TRACING_DECORATORS):
        return True
    return False if all(text in _PLAIN_DECORATORS for text in texts) else None


@per_node
def jitted_by_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`@jax.jit`, `@partial(jax.jit, ...)`, `@nnx.jit`, `@jax.shard_map(...)`: the body is
    compiled as one computation (where `with_sharding_constraint` pads instead of failing)."""
    return any(word in ast.unparse(d) for d in node.decorator_list for word in _JIT_DECORATORS)
