"""Name bindings per scope, with the bindings that reach each statement.

A scope records, for every name, which bindings can reach each point of its statements: an
assignment replaces the candidates, an if/else or a loop merges them (both branches stay
possible). This module holds what a scope *is* and how it answers a lookup; `scope_builder`
makes one in a pass over the statements, `definitions` makes the scopes of function and class
bodies only when something needs them.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shardls.analysis.source import Segment

if TYPE_CHECKING:
    from shardls.analysis.definitions import ClassInfo, FunctionInfo
    from shardls.analysis.module_info import ModuleInfo


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
