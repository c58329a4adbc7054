"""Where an expression is evaluated (`Frame`), and the type of the functions that evaluate each
kind of expression there."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from shardls.analysis.facts import Span
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Scope
from shardls.analysis.source import Segment
from shardls.analysis.values import Origin, Value
from shardls.stored_init import stored_init


@stored_init
@dataclass(frozen=True)
class Frame:
    """Where an expression is evaluated: module, scope, statement position and bound locals."""

    module: ModuleInfo
    scope: Scope
    segment: Segment
    position: int | None
    locals: Mapping[str, Value] = field(default_factory=dict)
    call_depth: int = 0
    enclosing: Frame | None = None
    """The call of the enclosing function, for a nested function's body (`FunctionV.closure`):
    where the names of the enclosing scope are read."""
    runs_at: tuple[str, int] | None = None
    """For a function's body: the top-level statement (module path, position) during which this
    call runs, when the call was followed from one: a function reads its module's names as they
    are bound when it runs, so before that statement. None: not known (the last binding)."""
    in_order: bool = False
    """The locals are those of this moment of a body run in order (`evaluation/ordered.py`): a
    name among them has that value, whatever later writes of its items the scope holds."""

    def with_locals(self, locals_: Mapping[str, Value]) -> Frame:
        """The same place with other locals (a comprehension's item): `dataclasses.replace`
        costs several times more, once per item and condition."""
        return Frame(
            self.module,
            self.scope,
            self.segment,
            self.position,
            locals_,
            self.call_depth,
            self.enclosing,
            self.runs_at,
            self.in_order,
        )

    def callee_runs_at(self) -> tuple[str, int] | None:
        """`runs_at` of the frame of a function called here: this statement at top level, else
        the statement this code runs during."""
        if self.scope.kind == "module" and self.position is not None:
            return (self.module.path, self.position)
        return self.runs_at

    def at(self, position: int | None) -> Frame:
        """The same call at another statement of its scope (a `return`, an `if` test), likewise
        without `dataclasses.replace`."""
        return Frame(
            self.module,
            self.scope,
            self.segment,
            position,
            self.locals,
            self.call_depth,
            self.enclosing,
            self.runs_at,
            self.in_order,
        )

    def line_of(self, node: ast.AST) -> int:
        return self.segment.abs_line(getattr(node, "lineno", 1))

    def origin(self, text: str, node: ast.AST) -> Origin:
        return Origin(text, self.module.path, self.line_of(node))

    def span(self, node: ast.AST) -> Span:
        """The node's position in the file, columns as string indices (ast counts UTF-8 bytes)."""
        line = self.line_of(node)
        end_lineno = getattr(node, "end_lineno", None) or getattr(node, "lineno", None) or 1
        end_line = self.segment.abs_line(end_lineno)
        lines = self.module.source.lines
        return Span(
            line,
            _char_column(lines, line, getattr(node, "col_offset", 0)),
            end_line,
            _char_column(lines, end_line, getattr(node, "end_col_offset", None) or 0),
        )


def _char_column(lines: tuple[str, ...], line: int, byte_column: int) -> int:
    if not 0 <= line < len(lines):
        return byte_column
    text = lines[line]
    if text.isascii():
        return byte_column
    return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator

    ExpressionHandlers: TypeAlias = dict[type[ast.AST], Callable[[Evaluator, Any, Frame], Value]]
    """The function that evaluates each type of expression node."""
