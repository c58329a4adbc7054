"""A name's bindings at a join stay bounded when every `if` copies them in both branches.

A binding that reaches an `if`'s join through both branches, each marked by an inner `if` of its
own, comes out as two copies with different guards; sequential ifs of that form double the copies
each time (TransformerEngine's `get_attention_backend`, 1,300 lines of `if ...: if ...:
use_flash_attention = False`, made `shardls check` run for hours). Past `MAX_CANDIDATES` the copies
of one binding are joined, keeping only the guards they share, so no binding is dropped.
"""

from __future__ import annotations

import ast

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scope_builder import MAX_CANDIDATES
from shardls.analysis.source import SegmentParser


def _nested_ifs(count: int) -> str:
    lines = ["x = 0"]
    for i in range(count):
        lines += [
            f"if a == {i}:",
            "    if b:",
            f"        x = {i + 1}",
            "else:",
            "    if c:",
            f"        x = {-i - 1}",
        ]
    return "\n".join(lines) + "\n"


def _final_values(source: str) -> list[str]:
    scope = ModuleInfo("/virtual/m.py", None, SegmentParser().parse(source)).scope
    _, candidates = scope.history["x"][-1]
    assert len(candidates) <= MAX_CANDIDATES, len(candidates)
    return sorted(ast.unparse(b.value) for b in candidates if b.value is not None)


def test_copies_do_not_double_at_each_if() -> None:
    values = _final_values(_nested_ifs(12))  # 12,286 bindings of x at the end without the join
    # Every assignment of x may reach the end, once (each through its own branch and those after).
    assert values == sorted(str(v) for v in range(-12, 13))


def test_few_copies_keep_their_own_guards() -> None:
    scope = ModuleInfo("/virtual/m.py", None, SegmentParser().parse(_nested_ifs(2))).scope
    _, candidates = scope.history["x"][-1]
    first = [b for b in candidates if b.order == 1]
    # x = 0 reaches the end along four paths, each with the branches it took.
    assert len(first) == 4 and len({b.guards for b in first}) == 4
