"""The one pass over a scope's statements that records which bindings reach each point.

Kept apart from `scopes` (what a scope holds and how it is read) because it is the only part
that knows Python's statements: assignment targets, branches and loops, `try`, `match`, and the
statements that fix a name's rank or change its value in place.
"""

from __future__ import annotations

import ast
import dataclasses

from shardls.analysis.rank_statements import rank_fixed_names
from shardls.analysis.scopes import Binding, Candidates, Scope
from shardls.analysis.source import Segment

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
            self._loop(stmt, segment, before)
        elif isinstance(stmt, ast.While):
            self._loop(stmt, segment, dict(self.state))
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

    def _loop(
        self, stmt: ast.For | ast.AsyncFor | ast.While, segment: Segment, before: dict[str, Candidates]
    ) -> None:
        """A loop's body runs any number of times, none included, and its `else` after any
        number of iterations: after the loop a name holds what it held `before`, or what the
        body or the `else` left."""
        self.loops += 1
        self.run(stmt.body, segment)
        self.loops -= 1
        after_body = dict(self.state)
        self.merge(before, [after_body, before])
        self.run(stmt.orelse, segment)
        self.merge(before, [after_body, dict(self.state), before])

    def _rank_fixed(self, stmt: ast.Assign | ast.Assert, segment: Segment, order: int) -> None:
        """`b, s, d = x.shape` or `assert x.ndim == 3` (or `assert x.ndim == 4 and sin.ndim == 3`):
        below it, `x` has that rank (Python raises otherwise), so the name is bound again, to its
        value with that rank (a `rank` binding: see `evaluation.bindings`). Only a name this scope
        already binds (a local or parameter)."""
        for name in rank_fixed_names(stmt):
            if self.state.get(name):
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
