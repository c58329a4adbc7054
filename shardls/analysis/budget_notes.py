"""Saying where a step budget ended (SH214), so that no layout or diagnostic goes missing silently.

The analysis of each top-level statement, and of each file, runs under a budget of evaluation
steps (`evaluator.Limits`), which keeps hostile or huge code from hanging it. When a budget ends,
the rest of the statement (or the file) is answered with unknown values: its layouts are symbolic
or missing and its problems unreported. An info at the first call the budget no longer covered
says so; it changes no other diagnostic's severity, and a check's exit status only counts errors.
"""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic, Span
from shardls.core import Severity

BUDGET_ENDED = "SH214"


def statement_budget_ended(span: Span) -> Diagnostic:
    """The statement's own budget ended at `span` (a call, or the statement's first line)."""
    return Diagnostic(
        span,
        BUDGET_ENDED,
        Severity.INFO,
        "the evaluation budget of this statement ran out here: layouts and problems from here to "
        "the end of the statement are missing or unknown",
    )


def file_budget_ended(span: Span) -> Diagnostic:
    """The file's budget ended at `span`: nothing after it is analysed."""
    return Diagnostic(
        span,
        BUDGET_ENDED,
        Severity.INFO,
        "the evaluation budget of this file ran out here: layouts and problems from here to the "
        "end of the file are missing or unknown",
    )
