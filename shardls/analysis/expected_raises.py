"""Errors the code expects or handles: JAX raising inside `with self.assertRaises(...)`,
`pytest.raises(...)`, or the body of a `try` whose handler catches every exception.

Test suites check that JAX rejects a layout (orbax: `with self.assertRaisesRegex(ValueError,
"partitioned 8 times"): jax.device_put(...)`): there the error is the code's intent, and an
error would fail the user's CI on a test that passes, so it is an info that says which block
expects it (hovers and `--show-layouts` still explain the layout). JAX's own tutorials show an
error with `try: x + y` / `except Exception as e: print(e)`, but a broad handler is also how real
code hides a bug it did not mean to have: that is a warning, visible and not failing the run. A
handler of one class (`except ValueError`) changes nothing: shardls does not say which class each
rejection is.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.analysis.facts import Diagnostic
from shardls.analysis.node_memo import per_node
from shardls.analysis.source import ParsedSource
from shardls.core import Severity

_RAISES = frozenset(
    {
        "assertRaises",
        "assertRaisesRegex",
        "assertRaisesRegexp",
        "assertRaisesWithLiteralMatch",
        "assertRaisesWithPredicateMatch",
        "raises",
        "assert_raises",
        "assert_raises_regex",
    }
)
"""unittest's and absltest's assertions, `pytest.raises`, numpy.testing's: each, used as a
context manager, passes only if its block raises."""

_EVERY_EXCEPTION = frozenset({"", "Exception", "BaseException"})
"""Handlers that catch whatever JAX raises (`""`: a bare `except:`)."""


@dataclass(frozen=True)
class _Block:
    first: int
    last: int
    """0-based file lines of the block's body."""
    why: str
    """`the `with pytest.raises(...)` at line 9 expects the code to raise`."""
    severity: Severity
    """What an error there becomes: an info where a test expects it, a warning where a handler
    catches it."""


def expected_by_tests(diagnostics: Sequence[Diagnostic], source: ParsedSource) -> tuple[Diagnostic, ...]:
    """The diagnostics, with each error inside a block that expects or handles an exception made
    an info that says so."""
    blocks = _expecting_blocks(source) if any(d.severity is Severity.ERROR for d in diagnostics) else []
    if not blocks:
        return tuple(diagnostics)
    return tuple(_expected(d, blocks) for d in diagnostics)


def _expected(diagnostic: Diagnostic, blocks: list[_Block]) -> Diagnostic:
    if diagnostic.severity is not Severity.ERROR:
        return diagnostic
    line = diagnostic.span.line
    block = next((b for b in blocks if b.first <= line <= b.last), None)
    if block is None:
        return diagnostic
    return replace(diagnostic, severity=block.severity, message=f"{diagnostic.message} ({block.why})")


def _expecting_blocks(source: ParsedSource) -> list[_Block]:
    blocks = []
    for segment in source.segments:
        if not _may_expect(segment.text):
            continue
        for statement in segment.body:
            for found in _statement_blocks(statement):
                first, last, before, at, after, severity = found
                why = f"{before}{segment.abs_line(at) + 1}{after}"
                blocks.append(_Block(segment.abs_line(first), segment.abs_line(last), why, severity))
    return blocks


_Found = tuple[int, int, str, int, str, Severity]
"""A block found in one top-level statement, in the statement's own line numbers (relative to
its segment): the body's first and last line, why it expects an exception (the text before and
after the line of the `with` or `except` that says so, and that line) and what an error there
becomes."""


@per_node
def _statement_blocks(statement: ast.stmt) -> tuple[_Found, ...]:
    """The blocks of one top-level statement, kept with its tree: an edit keeps the trees of the
    statements it did not touch (also when it moves them), so each edit walks only the new ones
    (walking every statement of a test file on every edit took 190 ms of each of flax's
    `transforms_test.py`)."""
    found = []
    for node in ast.walk(statement):
        expecting = _expecting(node) if isinstance(node, ast.stmt) else None
        if expecting is not None:
            body, before, at, after, severity = expecting
            found.append(
                (body[0].lineno, body[-1].end_lineno or body[-1].lineno, before, at, after, severity)
            )
    return tuple(found)


@functools.lru_cache(maxsize=20_000)
def _may_expect(text: str) -> bool:
    """Whether a segment's text may hold a block that expects or handles an exception, by text:
    a file keeps most of its segments' strings from one edit to the next."""
    return "raises" in text.lower() or "except" in text


def _expecting(node: ast.stmt) -> tuple[list[ast.stmt], str, int, str, Severity] | None:
    """The body in which an exception is expected or handled, why (the text before and after the
    line that says so, and that line), and what an error there is."""
    if isinstance(node, ast.With | ast.AsyncWith) and node.body:
        call = next((name for item in node.items if (name := _raises_call(item.context_expr))), None)
        if call is not None:
            return (
                node.body,
                f"expected here: the `with {call}(...)` at line ",
                node.lineno,
                " expects it",
                Severity.INFO,
            )
    if isinstance(node, ast.Try | ast.TryStar) and node.body:
        for handler in node.handlers:
            caught = "" if handler.type is None else ast.unparse(handler.type)
            if caught in _EVERY_EXCEPTION:
                written = f"`except {caught}`" if caught else "`except`"
                return node.body, f"the {written} at line ", handler.lineno, " catches it", Severity.WARNING
    return None


def _raises_call(expression: ast.expr) -> str | None:
    if not isinstance(expression, ast.Call):
        return None
    function = expression.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return ast.unparse(function) if name in _RAISES else None
