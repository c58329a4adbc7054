"""Which statements run: the branch of an `if` whose test is decided, and the statements that
end a block (`raise`, `return`, `sys.exit`, `pytest.skip`, a helper that only raises), after
which nothing in that block runs. A test decided only by the assumed device count decides
nothing: both branches run, each where the count is what the branch says of it
(`device_branches`), and so does the code after a guard that exits on one side."""

from __future__ import annotations

import ast
from dataclasses import replace

from shardls.analysis.evaluation.device_branches import counts_left, devices_stated, note_branch
from shardls.analysis.evaluation.known_values import decided
from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.node_memo import per_node
from shardls.analysis.values import FunctionV, Ref, Value, options
from shardls.analysis.walking.contexts import Context

Block = tuple[list[ast.stmt], Context]
"""A nested block that can run, and the context it runs in."""


def taken_blocks(evaluator: Evaluator, stmt: ast.stmt, frame: Frame, context: Context | None) -> list[Block]:
    """The nested blocks that can run: an `if` whose test is decided here runs one branch
    (`place(x, fsdp=True)` only reaches the `if fsdp:` body). One decided only by the assumed
    device count runs both, each in its own contexts (`in_branch`). The test is evaluated where
    the `if` runs: inside `if jax.device_count() == 4:`, a test on the count is decided.
    Without a context, the blocks that run on the assumed count (the mesh a module sets there)."""
    outside = Context() if context is None else context
    if isinstance(stmt, ast.If):
        with devices_stated(evaluator, outside.branches, outside.count):
            test = evaluator.evaluate(stmt.test, frame)
            truth = truthiness(test)
            if truth is not None and (context is None or decided(test) is not None):
                return [(stmt.body if truth else stmt.orelse, outside)]
            if context is not None:  # on the assumed count, or not known: each branch says what it can
                return [
                    (block, inner)
                    for block, branch in ((stmt.body, True), (stmt.orelse, False))
                    for inner in in_branch(evaluator, stmt, branch, test, frame, outside)
                ]
    return [(block, outside) for block in blocks_of(stmt)]


def in_branch(
    evaluator: Evaluator, stmt: ast.If, branch: bool, test: Value, frame: Frame, context: Context
) -> list[Context]:
    """The contexts of one branch of an `if` on the assumed device count: with the branch among
    `Context.branches` when it says something of the count (states it, or contradicts the
    assumed one), else the context as it is; one per count when the branches leave a few
    (`jax.device_count() > 2 or ...` in the `else`: 1 and 2), as a branch stating each would."""
    note_branch(evaluator, stmt, branch, test, frame)
    guard = (id(stmt), branch)
    if guard not in evaluator.memos.stated_counts:
        return [context]
    inner = replace(context, branches=context.branches | {guard})
    counts = counts_left(evaluator, inner.branches)
    if inner.count in counts or not counts:
        return [inner]
    return [replace(inner, count=count) for count in counts]


def following(
    evaluator: Evaluator, stmt: ast.stmt, blocks: list[Block], frame: Frame, context: Context
) -> list[Context]:
    """The contexts of the statements after `stmt` in its block; none when they do not run there
    (`stmt` ends the block, or every branch of an `if` does). After an `if` one of whose two
    branches exits, they run where the other one does: after `if jax.device_count() != 4:
    pytest.skip(...)`, where there are 4 devices; after `if jax.device_count() > 2 or ...:
    self.skipTest(...)`, once where there is 1 device and once where there are 2."""
    if ends(evaluator, stmt, frame):
        return []
    if not isinstance(stmt, ast.If):
        return [context]
    staying = [(block, inner) for block, inner in blocks if not leaves(evaluator, block, frame)]
    if not staying:
        return []
    ran = {id(block) for block, _ in blocks}
    stays = {id(block) for block, _ in staying}
    return [inner for _, inner in staying] if len(ran) == 2 and len(stays) == 1 else [context]


def leaves(evaluator: Evaluator, block: list[ast.stmt], frame: Frame) -> bool:
    """Whether running `block` always ends the function or the program."""
    return bool(block) and ends(evaluator, block[-1], frame)


def ends(evaluator: Evaluator, stmt: ast.stmt, frame: Frame) -> bool:
    """`raise`, `return`, or a call that never returns: `pytest.skip`/`fail`/`exit`,
    `sys.exit`, `self.skipTest`/`self.fail`, or a workspace helper that only raises
    (`_fail(msg)`). The code after it does not run there."""
    if not may_end(stmt):
        return False
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return True  # `raise`, `return`
    func = stmt.value.func
    if isinstance(func, ast.Attribute) and func.attr in _TEST_CASE_EXITS:
        return True
    for option in options(evaluator.evaluate(func, frame)):
        if isinstance(option, Ref) and option.qualname in _EXITS:
            return True
        if isinstance(option, FunctionV) and _only_raises(option.func.node):
            return True
    return False


def may_end(stmt: ast.stmt) -> bool:
    """Whether `ends` may hold, read from the syntax alone: a walk that needs no visit from a
    statement asks this before it evaluates anything to know whether the block goes on."""
    if isinstance(stmt, (ast.Raise, ast.Return)):
        return True
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    func = stmt.value.func
    if isinstance(func, ast.Attribute) and func.attr in _TEST_CASE_EXITS:
        return isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    return _may_exit(func)


def own_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates itself (not those of its nested blocks)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return []
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return [stmt]


def blocks_of(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The nested blocks of a compound statement that the walk enters as they are (not a `with`,
    which changes the context, nor a `def` or `class`)."""
    if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        handlers = [h.body for h in stmt.handlers]  # type: ignore[attr-defined]
        return [stmt.body, *handlers, stmt.orelse, stmt.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []


@per_node
def nested_scopes(stmt: ast.stmt) -> tuple[bool, bool]:
    """Whether the blocks of `stmt` hold, at any depth, a `with` (whose body may run under a mesh
    its items make current) and a `def` or `class` (whose bodies run in their callers' contexts;
    what they hold is theirs)."""
    entering = defining = False
    for block in blocks_of(stmt):
        for inner in block:
            if isinstance(inner, (ast.With, ast.AsyncWith)):
                entering = True
            elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defining = True
            else:
                inner_entering, inner_defining = nested_scopes(inner)
                entering, defining = entering or inner_entering, defining or inner_defining
    return entering, defining


_EXITS = frozenset(
    {
        "pytest.skip",
        "pytest.fail",
        "pytest.exit",
        "pytest.xfail",
        "sys.exit",
        "os._exit",
        "os.abort",
        "builtins.exit",
        "builtins.quit",
    }
)
"""Functions that never return (the code after a call of one does not run)."""

_TEST_CASE_EXITS = frozenset({"skipTest", "fail"})
"""`unittest.TestCase` methods that raise (`self.skipTest(...)`)."""


def _may_exit(func: ast.expr) -> bool:
    """A cheap test of the syntax before the callee is evaluated: its last name is one of the
    functions that never return, or says it fails or raises."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _EXIT_NAMES or any(word in name.lower() for word in ("fail", "raise", "abort", "error"))


_EXIT_NAMES = frozenset(qualname.rsplit(".", 1)[-1] for qualname in _EXITS)


def _only_raises(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A helper whose body ends in `raise` and never returns."""
    body = node.body
    return (
        bool(body)
        and isinstance(body[-1], ast.Raise)
        and not any(isinstance(n, ast.Return) for n in ast.walk(node))
    )
