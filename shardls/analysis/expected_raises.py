"""Errors a test expects: JAX raising inside `with self.assertRaises(...)` or `pytest.raises(...)`.

Test suites check that JAX rejects a layout (orbax: `with self.assertRaisesRegex(ValueError,
"partitioned 8 times"): jax.device_put(...)`). There the error is the code's intent, not a
mistake: reporting it as an error would fail the user's CI on a test that passes. It stays
visible, as an info that says which block expects it, so that hovers and `--show-layouts` still
explain the layout.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.analysis.facts import Diagnostic
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


@dataclass(frozen=True)
class _Block:
    first: int
    last: int
    """0-based file lines of the `with` block's body."""
    call: str
    line: int


def expected_by_tests(diagnostics: Sequence[Diagnostic], source: ParsedSource) -> tuple[Diagnostic, ...]:
    """The diagnostics, with each error inside a block that expects an exception made an info."""
    blocks = _raising_blocks(source) if any(d.severity is Severity.ERROR for d in diagnostics) else []
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
    note = f"expected here: the `with {block.call}(...)` at line {block.line + 1} expects the code to raise"
    return replace(diagnostic, severity=Severity.INFO, message=f"{diagnostic.message} ({note})")


def _raising_blocks(source: ParsedSource) -> list[_Block]:
    blocks = []
    for segment in source.segments:
        if "raises" not in segment.text.lower():
            continue
        for node in (n for statement in segment.body for n in ast.walk(statement)):
            if not isinstance(node, ast.With | ast.AsyncWith) or not node.body:
                continue
            call = next((name for item in node.items if (name := _raises_call(item.context_expr))), None)
            if call is not None:
                first, last = node.body[0].lineno, node.end_lineno or node.body[-1].lineno
                blocks.append(
                    _Block(
                        segment.abs_line(first), segment.abs_line(last), call, segment.abs_line(node.lineno)
                    )
                )
    return blocks


def _raises_call(expression: ast.expr) -> str | None:
    if not isinstance(expression, ast.Call):
        return None
    function = expression.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    if name not in _RAISES:
        return None
    return ast.unparse(function)
