"""Where the calls are, read from the syntax alone (no evaluation): the calls an expression
makes, the name a call or an assignment uses, the text of a node, and the names a module passes
to a function such as `jax.jit`."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.node_memo import per_node
from shardls.analysis.source import Segment


def called_name(call: ast.Call) -> str | None:
    """The last name of what `call` calls (`jax.set_mesh(...)` -> `set_mesh`)."""
    return last_name(call.func)


def last_name(node: ast.expr) -> str | None:
    """The last name of a name or attribute (`jax.jit` -> `jit`), None for anything else."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


@per_node
def calls_in(expression: ast.AST) -> tuple[tuple[ast.Call, ast.Call | None], ...]:
    """The calls an expression makes where it is written, each with the call it is an argument
    of, in the order they are visited (found once per node: a function's body is walked again
    for every context it runs in)."""
    found: list[tuple[ast.Call, ast.Call | None]] = []
    stack: list[tuple[ast.AST, ast.Call | None]] = [(expression, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
            isinstance(node, ast.Lambda) and _has_parameters(node)
        ):
            continue  # a lambda without parameters (`nnx.eval_shape(lambda: Model(...))`) runs as written
        if isinstance(node, ast.Call):
            found.append((node, parent))
            parent = node
        children: list[tuple[ast.AST, ast.Call | None]] = []
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                children.extend((item, parent) for item in child if isinstance(item, _CALL_HOLDERS))
            elif isinstance(child, _CALL_HOLDERS):
                children.append((child, parent))
        stack.extend(reversed(children))
    return tuple(found)


def _has_parameters(node: ast.Lambda) -> bool:
    args = node.args
    return bool(args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


_CALL_HOLDERS = (ast.expr, ast.keyword, ast.comprehension)
"""Node kinds that may contain a call (operators and load/store contexts never do)."""


def node_text(segment: Segment, node: ast.AST) -> str:
    first = getattr(node, "lineno", 1) - 1
    last = getattr(node, "end_lineno", None) or len(segment.lines)
    return "\n".join(segment.lines[first:last])


def mentions(text: str, name: str) -> bool:
    """Whether `text` may call `name`: holds it as a whole word, as any call `name(...)` or
    `x.name(...)` writes it. A substring test let the callers of `f` be searched in every
    function of a file (`f` is in `def`), and those of `init` in every `__init__` and `kernel_init`."""
    if not name.isidentifier():
        return name in text
    return next(word_matches(text, name), None) is not None


def word_matches(text: str, word: str) -> Iterator[tuple[int, int]]:
    """The start and end offsets of the identifier `word` in `text` as a whole word: found as a
    word's end by a pattern that begins with the word, which `re` scans for in C, and its start
    tested here (a pattern that begins with a lookbehind is tried at every offset). Matches of an
    identifier cannot overlap, since each ends before a character that is not a word's."""
    if word not in text:  # most texts do not hold it at all: no regex
        return
    for match in _ending(word).finditer(text):
        start = match.start()
        if start == 0 or not _WORD_CHAR.match(text, start - 1):
            yield start, match.end()


@functools.lru_cache(maxsize=4096)
def _ending(word: str) -> re.Pattern[str]:
    return re.compile(re.escape(word) + r"(?!\w)")


_WORD_CHAR = re.compile(r"\w")


def target_name(stmt: ast.stmt) -> str | None:
    """The name an assignment binds (`self.up = ...` -> `up`), for naming the sites it creates."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute):
            return target.attr
    return None


def first_arguments(module: ModuleInfo, callee: str) -> frozenset[str]:
    """The names a module passes as first argument to calls of `callee` (`jax.jit(step)`,
    `nnx.vmap(create_block)`): one scan of the text per module and callee, not one per function
    the walker asks about (thousands in a long test class)."""
    key = ("first arguments", callee)
    found = module.searches.get(key)
    if found is None:
        pattern = re.compile(rf"\b{re.escape(callee)}\s*\(\s*([A-Za-z_]\w*)")
        segments = module.source.segments
        found = module.searches[key] = frozenset(
            match.group(1)
            for i in module.call_index.get(callee, ())
            for match in pattern.finditer(segments[i].text)
        )
    return found
