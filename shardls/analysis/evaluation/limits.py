"""The bounds every evaluation runs under (documented in docs/architecture.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    steps: int = 20_000
    """Expression nodes evaluated per top-level question (a site, a hover)."""
    int_bits: int = 128
    """Integers beyond ±2**128 become Unknown (no shape is that large; `2**10**10` stays cheap)."""
    collection: int = 10_000
    """Longest tuple/list/range/string repetition the interpreter will build."""
    string: int = 100_000
    call_depth: int = 12
    """Nested calls into workspace functions."""
    expr_depth: int = 120
    """Nested expression depth (deeper expressions are Unknown, never a RecursionError)."""
    choices: int = 16
    """Most alternatives kept for one value (if/else chains)."""
    statement_steps: int = 40_000
    statement_steps_per_char: int = 8
    """Steps all the questions about one top-level statement may take together: this plus 8 per
    character of it. Hostile code then spends its own budget, not the next statement's."""
    file_steps: int = 150_000
    file_steps_per_char: int = 10
    file_steps_cap: int = 2_000_000
    """Steps all the questions about one file may take together: `file_steps` plus
    `file_steps_per_char` per character, at most `file_steps_cap`. Real code takes well under one
    step per character (0.1-0.3 measured); many nested comprehensions over rebound names made a
    4 KB file ask 2,200 questions of up to `steps` each (27 s) before these bounds."""

    def file_budget(self, chars: int) -> int:
        return min(self.file_steps + self.file_steps_per_char * chars, self.file_steps_cap)

    def statement_budget(self, chars: int) -> int:
        return self.statement_steps + self.statement_steps_per_char * chars


class BudgetExceeded(Exception):
    """Raised inside the interpreter when a question used up its step budget."""
