"""What the interpreter learnt about sharded types while it evaluated a file: one event per operation
evaluated with known types (its result, or the problem JAX raises), and per placement that moves
data from one known layout to another.

Evaluation is memoised per binding, so an event is recorded again whenever a memoised value is
reused (`TypeRecorder.replay`): what a segment's analysis reports never depends on the order in
which segments were analysed, which the analyzer's per-segment cache relies on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shardls.analysis.facts import Span
from shardls.analysis.values import TypedArray
from shardls.core import Problem


@dataclass(frozen=True)
class TypeEvent:
    path: str
    span: Span
    operation: str
    """What was applied, as a user reads it (`x @ w`, `reshape`, `device_put`)."""
    result: TypedArray | None
    problem: Problem | None = None
    """Set when JAX rejects the operation (`result` is then None)."""
    operands: tuple[TypedArray, ...] = ()
    certain: bool = True
    """False when the operands are one of several values the code may have (an `if` the analysis
    cannot decide): a rejection is then at most a warning."""
    assumptions: tuple[str, ...] = ()
    node: ast.AST | None = field(default=None, compare=False, hash=False)
    placement: bool = False
    """A `device_put`/`reshard`/`with_sharding_constraint` from a known type (`operands[0]`)."""


class TypeRecorder:
    """The events of one file's analysis, in the order they were recorded."""

    def __init__(self) -> None:
        self.events: list[TypeEvent] = []
        self.file_typed = True
        """Whether a mesh of the file has Explicit axes (`TypingPass.active`): where it has none
        and the context mesh has none, no array can have a sharded type (`propagate.may_type`)."""

    def record(self, event: TypeEvent) -> None:
        self.events.append(event)

    def mark(self) -> int:
        return len(self.events)

    def since(self, mark: int) -> tuple[TypeEvent, ...]:
        return tuple(self.events[mark:])

    def replay(self, events: tuple[TypeEvent, ...]) -> None:
        self.events.extend(events)
