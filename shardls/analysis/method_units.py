"""The statements of a class as units of re-analysis: an edit confined to one method's body
analyses that method again, and the class's other statements that may read what it changed, not
the whole class (maxtext's `layers/moe.py` is one 2,000-line class; an edit of a number in one of
its methods analysed all of it again).

A class segment whose body holds only definitions and assignments is analysed one statement of
its body at a time (`Walker.member_visits`), each keeping its own sites, diagnostics and reads
(`UnitResult`). After an edit, `kept_units` says which of them to analyse again, or None to
analyse the whole class as before. It answers only when everything outside the edited method's
body is as it was (below it, moved by the lines the edit added or removed: the kept results move
with them, `line_shift`), and the edit replaced that one segment of the file; then a statement of
the class is analysed again when it may see the change:

- it is the edited method;
- its analysis looked the method up on the class or an instance (`Reads.methods`: the only way
  an evaluation reaches a method's body, wherever the code that does it is written), or read all
  the class's method bodies (`nnx.state` of an instance: which attributes a method sets);
- it searched the callers of a name that the edited method calls (before or after the edit), or
  that another statement analysed again calls (`called_names`, as the call index finds the
  segments a search walks): the search walks those statements, in their contexts, which the
  edit may have changed;
- it read another module that changed since.

What a statement's analysis reads of the others is only their text, through those lookups and
searches: a method's value is its text evaluated with the arguments of the call that asks,
never the contexts its own analysis ran in.

The edit is confined to the method when its signature and decorators are as they were, the
method is not one the evaluator reads to build an instance or runs implicitly (dunder methods,
`setup`: instances' attributes come from them, `ClassInfo.self_assignments`), and its body binds
no global or nonlocal name. When the file's names changed in nothing but the class's name's
binding (`FileCache.stale` checks it), the file's other results are stale only when they looked
the method up or searched the callers of a name it calls, not whenever they read the class's
name or a name the class calls anywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, Self, TypeVar, cast

from shardls.analysis.facts import Diagnostic, Site
from shardls.analysis.line_shift import Shifter, Unshiftable, rebuilt
from shardls.analysis.module_info import called_names
from shardls.analysis.source import Segment
from shardls.analysis.workspace import Version, Workspace

_MEMBERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign, ast.Pass)
"""The statements a class body may hold to be analysed statement by statement: none of them
changes the context the next one runs in (a `jax.set_mesh(...)` call, an `if`, a `with` do)."""


@dataclass(frozen=True)
class UnitResult:
    """What the analysis of one statement of a class's body gave and read."""

    sites: list[Site]
    diagnostics: list[Diagnostic]
    reads: frozenset[tuple[str, str]]
    """What it read, as `FileCache` indexes a segment's reads."""
    modules: tuple[tuple[str, Version], ...]
    spent: int
    """The steps it took of the segment's statement budget."""

    def moved(self, shifter: Shifter) -> UnitResult:
        trusted = not self.modules
        sites = cast(list[Site], shifter.values(self.sites, trusted))
        diagnostics = cast(list[Diagnostic], shifter.values(self.diagnostics, trusted))
        return cast(UnitResult, rebuilt(self, {"sites": sites, "diagnostics": diagnostics}))


def class_members(segment: Segment) -> tuple[ast.stmt, ...] | None:
    """The statements of the body of the class that is the segment's only statement, when it
    is analysed one of them at a time (None: the segment is analysed as a whole)."""
    if len(segment.body) != 1 or segment.error is not None:
        return None
    (node,) = segment.body
    if not isinstance(node, ast.ClassDef):
        return None
    body = node.body
    if all(isinstance(s, _MEMBERS) or _is_docstring(s) for s in body):
        return tuple(body)
    return None


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


@dataclass(frozen=True)
class MethodEdit:
    """An edit confined to the body of one method of a class segment (`method_edit`)."""

    cls: str
    index: int
    """The method's place in the class's body."""
    read: frozenset[tuple[str, str]]
    """The keys of the results that read the method (`Reads.methods`)."""
    called: frozenset[str]
    """The names the method calls, before or after the edit (`called_names`)."""
    before: Segment
    after: Segment
    shifter: Shifter | None
    """How the kept outcomes move to the lines of the edited text (None: they do not)."""


def method_edit(old: Segment, new: Segment, shifter: Shifter | None) -> MethodEdit | None:
    """The edit from `old` to `new` when it is confined to one method's body (see the module's
    docstring); None otherwise."""
    before, after = class_members(old), class_members(new)
    if before is None or after is None or len(before) != len(after):
        return None
    edited = _edited_method(old, before, new, after)
    if edited is None:
        return None
    cls, method = cast(ast.ClassDef, new.body[0]).name, cast(ast.FunctionDef, after[edited]).name
    return MethodEdit(
        cls,
        edited,
        frozenset({("method", f"{cls}.{method}"), ("method", f"{cls}.*")}),
        called_names(_text(old, before[edited])) | called_names(_text(new, after[edited])),
        old,
        new,
        shifter,
    )


class Unit(Protocol):
    """A statement's kept outcome, as `kept_units` reads it (`UnitResult`, or the mesh pass's
    outcome of one statement)."""

    @property
    def reads(self) -> frozenset[tuple[str, str]]: ...

    @property
    def modules(self) -> tuple[tuple[str, Version], ...]: ...

    def moved(self, shifter: Shifter) -> Self: ...


U = TypeVar("U", bound=Unit)


def kept_units(edit: MethodEdit, old_units: Sequence[U], workspace: Workspace) -> list[U | None] | None:
    """The outcome each statement of the edited class keeps, at the lines the edit moved it to,
    or None for those to analyse again (see the module's docstring; also those whose outcome
    names an edited line); None: analyse the whole class again."""
    after = class_members(edit.after)
    if after is None or len(old_units) != len(after):
        return None
    moved: list[U | None] = []
    for unit in old_units:
        try:
            moved.append(unit.moved(edit.shifter) if edit.shifter is not None else unit)
        except Unshiftable:
            moved.append(None)
    redo = {edit.index} | {index for index, unit in enumerate(moved) if unit is None}
    called = set(edit.called).union(*(called_names(_text(edit.after, after[index])) for index in redo))
    grown = True
    while grown:
        grown = False
        for index, unit in enumerate(old_units):
            if index in redo:
                continue
            if (
                not edit.read.isdisjoint(unit.reads)
                or any(kind == "callee" and name in called for kind, name in unit.reads)
                or any(workspace.current(path) is not version for path, version in unit.modules)
            ):
                redo.add(index)
                called |= called_names(_text(edit.after, after[index]))
                grown = True
    return [None if index in redo else unit for index, unit in enumerate(moved)]


def _edited_method(
    old: Segment, before: Sequence[ast.stmt], new: Segment, after: Sequence[ast.stmt]
) -> int | None:
    """The index of the one method whose body alone differs between the two classes' texts: the
    lines above the change are the same, and so are those below it, moved by the lines it added
    or removed (None: no such method)."""
    if old.first_line != new.first_line:
        return None
    delta = len(new.lines) - len(old.lines)
    same = 0
    while same < min(len(old.lines), len(new.lines)) and old.lines[same] == new.lines[same]:
        same += 1
    tail = 0
    while tail < min(len(old.lines), len(new.lines)) - same and old.lines[-1 - tail] == new.lines[-1 - tail]:
        tail += 1
    if same == len(old.lines) == len(new.lines):
        return None
    found = None
    for index, (a, b) in enumerate(zip(before, after)):
        if type(a) is not type(b):
            return None
        below = b.lineno > len(new.lines) - tail  # 1-based: the whole statement is below the change
        shift = delta if below else 0
        if (a.lineno + shift, (a.end_lineno or 0) + shift) == (b.lineno, b.end_lineno or 0):
            continue
        if found is not None or not isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) or not b.body:
            return None
        found = index
    if found is None:
        found = next((i for i, b in enumerate(after) if _holds(b, same, len(new.lines) - tail)), None)
    if found is None or not _holds(after[found], same, len(new.lines) - tail):
        return None
    if not _holds(before[found], same, len(old.lines) - tail):
        return None
    for method in (cast(ast.FunctionDef, before[found]), cast(ast.FunctionDef, after[found])):
        if not _may_be_unit(method):
            return None
    return found


def _holds(stmt: ast.stmt, first: int, end: int) -> bool:
    """Whether the lines from `first` to `end` (0-based, `end` excluded; none when equal: a line
    removed between two) lie in the body of the method `stmt`."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or not stmt.body:
        return False
    return stmt.body[0].lineno - 1 <= first and end <= (stmt.end_lineno or stmt.lineno)


def _may_be_unit(method: ast.FunctionDef) -> bool:
    """Whether an edit of the method's body changes only what its own statements do and what
    reads it by name: its signature ends above its body, and the evaluator neither reads it to
    build an instance nor runs it implicitly; its body binds no name of another scope."""
    name = method.name
    if (name.startswith("__") and name.endswith("__")) or name in ("setup", "setUp"):
        return False
    header: list[ast.AST] = [*method.decorator_list, method.args]
    if method.returns is not None:
        header.append(method.returns)
    header_end = max(
        (getattr(node, "end_lineno", None) or method.lineno for part in header for node in ast.walk(part)),
        default=method.lineno,
    )
    if method.body[0].lineno <= max(header_end, method.lineno):
        return False
    return not any(isinstance(node, (ast.Global, ast.Nonlocal)) for node in ast.walk(method))


def _text(segment: Segment, stmt: ast.stmt) -> str:
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
    return "\n".join(segment.lines[first - 1 : stmt.end_lineno or stmt.lineno])
