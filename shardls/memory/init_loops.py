"""`for` loops in a module's `__init__` (`loop`), and the names a loop's body reads and writes,
which decide whether one run of it stands for every iteration."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shardls.analysis.evaluator import Frame, bind_target
from shardls.analysis.values import Seq, Unknown, Value
from shardls.memory.module_lists import MAX_ITEMS

if TYPE_CHECKING:
    from shardls.memory.init_body import InitBody

MAX_UNROLLED = 1024
"""Items of a comprehension, or iterations of a `for` loop, resolved one by one when their sizes
depend on the loop."""


def loop(body: InitBody, stmt: ast.For, frame: Frame, here: Frame) -> Frame:
    """A body that does not depend on the iteration runs once and what it adds to lists is
    repeated (like a comprehension's item); otherwise each iteration runs with its loop
    variables bound, up to MAX_UNROLLED. An iterable the analysis cannot list counts its body
    once (with a note)."""
    names = stored(stmt.target)
    reads = {name for s in stmt.body for name in _reads(s)}
    carried = (_read_first(stmt.body) & _written(stmt.body)) - set(body.lists)
    if not (reads & names) and not carried:
        return _repeated(body, stmt, frame, here, _iterations(body, stmt.iter, here))
    items = body.evaluator.iterate(body.evaluator.evaluate(stmt.iter, here), here)
    if not isinstance(items, Seq):
        return _repeated(body, stmt, frame, here, None)
    if len(items.items) > MAX_UNROLLED:
        return _repeated(body, stmt, frame, here, None, f"more than {MAX_UNROLLED} iterations differ")
    return _unrolled(body, stmt, frame, items.items)


def _iterations(body: InitBody, node: ast.expr, frame: Frame) -> int | None:
    """How many times a loop runs, when the evaluator can list its iterable (which it does up
    to its collection limit, so that the copies stay bounded too)."""
    items = body.evaluator.iterate(body.evaluator.evaluate(node, frame), frame)
    return len(items.items) if isinstance(items, Seq) else None


def _repeated(
    body: InitBody,
    stmt: ast.For,
    frame: Frame,
    here: Frame,
    times: int | None,
    why: str = "the length is not known",
) -> Frame:
    """Run the body once and repeat what it added to each list `times` times."""
    if not body.resolver.spend():
        return frame
    marks = [(container, container.mark()) for container in body.containers()]
    before, writes = dict(body.attrs), body.writes
    names = {name: Unknown("loop variable", symbol=name) for name in stored(stmt.target)}
    after = body.in_loop(stmt.body, body.with_locals(frame, names))
    if not all([container.repeat(mark, times) for container, mark in marks]):
        why = f"it would make more than {MAX_ITEMS} copies of an item"
        times = None
    if times == 0:
        body.attrs = before
        return frame
    if times is None and body.writes != writes:
        body.resolver.note(
            f"`for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)[:60]}` at line "
            f"{here.line_of(stmt) + 1}: {why}, so its body is counted once"
        )
    return after


def _unrolled(body: InitBody, stmt: ast.For, frame: Frame, items: tuple[Value, ...]) -> Frame:
    """Each iteration with its loop variables bound; locals the body sets carry over."""
    current = frame
    for item in items:
        if not body.resolver.spend():
            break
        bound: dict[str, Value] = {}
        if not bind_target(stmt.target, item, bound):
            bound = {name: Unknown("loop variable", symbol=name) for name in stored(stmt.target)}
        current = body.in_loop(stmt.body, body.with_locals(current, bound))
    return current


def _read_first(body: list[ast.stmt], written: frozenset[str] = frozenset()) -> set[str]:
    """Names the statements read before writing them: with `_written`, the values one iteration
    of a loop passes to the next (`d = 2 * d`)."""
    early: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.For):
            early |= _reads(stmt.iter) - written
            early |= _read_first(stmt.body + stmt.orelse, written | stored(stmt.target))
        elif isinstance(stmt, ast.If):
            early |= _reads(stmt.test) - written
            early |= _read_first(stmt.body, written) | _read_first(stmt.orelse, written)
        elif isinstance(stmt, (ast.With, ast.Try, ast.While)):
            early |= _read_first(stmt.body, written)
        else:
            early |= _reads(stmt) - written
        written = written | _written([stmt])
    return early


def _reads(node: ast.AST) -> set[str]:
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        names.add(node.target.id)
    return names


def _written(body: list[ast.stmt]) -> set[str]:
    return {name for stmt in body for name in stored(stmt)}


def stored(node: ast.AST) -> set[str]:
    """The names `node` assigns (a loop target `self.x` assigns none)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
