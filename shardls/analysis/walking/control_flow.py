"""Which statements run: the branch of an `if` whose test is decided, and the statements that
end a block (`raise`, `return`, `sys.exit`, `pytest.skip`, a helper that only raises), after
which nothing in that block runs."""

from __future__ import annotations

import ast

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.values import FunctionV, Ref, options


def taken_blocks(evaluator: Evaluator, stmt: ast.stmt, frame: Frame) -> list[list[ast.stmt]]:
    """The nested blocks that can run: an `if` whose test is decided here runs one branch
    (`place(x, fsdp=True)` only reaches the `if fsdp:` body). A decided branch that raises
    or returns ends the block it is in (`if n * m != jax.device_count(): raise ...` guards
    the mesh below it)."""
    if isinstance(stmt, ast.If):
        truth = truthiness(evaluator.evaluate(stmt.test, frame))
        if truth is not None:
            return [stmt.body if truth else stmt.orelse]
    return _blocks(stmt)


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


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        handlers = [h.body for h in stmt.handlers]  # type: ignore[attr-defined]
        return [stmt.body, *handlers, stmt.orelse, stmt.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []


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
