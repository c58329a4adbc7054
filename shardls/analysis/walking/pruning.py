"""Which statements and functions a walk can skip because it can find nothing in them.

A caller search keeps only the calls of its callee, and a discovery walk only calls worth
visiting and the statements the typing pass types: the statements, blocks and functions where
neither can be are asked only whether they end the block or set a mesh (`Walker._statements`).
These walks were most of the evaluation steps of a repository check (issue #14; figures in
benchmarks/README.md, eighth and ninth sessions).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.source import Segment
from shardls.analysis.walking.call_mentions import CallMentions
from shardls.analysis.walking.contexts import Context
from shardls.analysis.walking.control_flow import blocks_of, following, may_end, nested_scopes, taken_blocks


@dataclass(frozen=True)
class WalkPruning:
    """The skips of one walker's walks."""

    evaluator: Evaluator
    mentions: CallMentions
    """Which statements may hold a call worth visiting."""
    typing: bool
    """Whether the walker's discovery walks type statements (`Walker.on_statement`)."""
    idle: Callable[[Context], bool] | None
    inactive: Callable[[Context], bool] | None
    mesh_setters: Callable[[], bool]
    """Whether the module calls a function that runs `jax.set_mesh` (found when first asked)."""

    def unseen(self, stmt: ast.stmt, segment: Segment, callee: str) -> bool:
        """Whether a caller search can find nothing in the statement, nested blocks included: its
        text does not name the callee. Such a statement is not walked (its nested blocks, the
        contexts of functions defined in them, the tests of its `if`s), only asked whether it
        ends the block or sets a mesh. Functions are left to `Walker._function`, which tests their
        text from the `def` line while their decorators run where the `def` is."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        return not self.mentions.may_call(stmt, segment, callee)

    def after_unwalked(self, stmt: ast.stmt, frame: Frame, context: Context) -> list[Context]:
        """The contexts of the statements after an unwalked one, as the walk would decide them
        (none: they do not run; several: once per device count a guard leaves). The test of an
        `if` is evaluated only when a branch's last statement may end the block (`may_end`, from
        the syntax): only then can it stop or narrow what follows (`following`)."""
        if not isinstance(stmt, ast.If):
            return following(self.evaluator, stmt, [], frame, context)
        if not any(block and may_end(block[-1]) for block in (stmt.body, stmt.orelse)):
            return [context]
        blocks = taken_blocks(self.evaluator, stmt, frame, context)
        return following(self.evaluator, stmt, blocks, frame, context)

    def quiet(self, stmt: ast.stmt, segment: Segment, context: Context) -> bool:
        """Whether a discovery walk can find nothing in the nested blocks of `stmt` (an `if`, a
        loop, a `try`), run in `context`: no statement of theirs may hold a call worth visiting,
        and `on_statement`, if any, does nothing there. Their statements run in `context` (an
        `if` on the device count only adds its branch), unless they set a mesh: a `jax.set_mesh`
        is a call worth visiting, a function that runs it is among the module's `mesh_setters`,
        and a `with` inside is never skipped. A `def` or `class` inside needs what `unvisited`
        needs of a function, since its body runs in its callers' contexts. Such blocks are not
        walked, and the test of an `if` is evaluated only when it may end the block
        (`after_unwalked`): these tests were a fifth of maxtext's evaluation steps."""
        blocks = blocks_of(stmt)
        if not blocks or any(self.mentions.may_call(s, segment, None) for block in blocks for s in block):
            return False
        if not self.typing:
            return True
        entering, defining = nested_scopes(stmt)
        if entering or self.mesh_setters():
            return False
        if defining:
            return self.idle is not None and self.idle(context)
        return self.inactive is not None and self.inactive(context)

    def unvisited(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, segment: Segment, context: Context
    ) -> bool:
        """Whether a discovery walk can find nothing in a function defined in `context`: no call
        in it is worth visiting, and `on_statement`, if any, is `idle` there and the module
        calls no function that runs `jax.set_mesh` (whose mesh its callers' contexts could hold)."""
        if self.mentions.may_call(node, segment, None):
            return False
        if not self.typing:
            return True
        return self.idle is not None and not self.mesh_setters() and self.idle(context)
