"""The `P(...)`, `PartitionSpec(...)` or `NamedSharding(...)` written around the cursor.

A hover on a spec answers for that exact spec: the analysis' sites are matched against the call
found here, so a hover inside `in_specs=(P("a"), P("b"))` never describes the other entry, and a
spec no site uses still gets its own answer. The call is found by scanning the text (brackets
matched outside strings and comments) and read with `ast`, so an unfinished line elsewhere does
not matter. Nothing is evaluated: entries that are not literals leave the normalised form unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Span
from shardls.core import UNCONSTRAINED, PartitionSpec
from shardls.core.spec import RawEntry

SPEC_CALLEES = ("P", "PS", "PartitionSpec")
SHARDING_CALLEES = ("NamedSharding",)
_HEAD = re.compile(r"(?<![\w.])(?:\w+\.)*(" + "|".join(SPEC_CALLEES + SHARDING_CALLEES) + r")\s*\(")
WINDOW = 40
"""Lines searched above and below the cursor: a spec call longer than this is not matched."""


@dataclass(frozen=True)
class SpecCall:
    span: Span
    text: str
    """As written (whitespace runs folded to one space)."""
    spec: PartitionSpec | None
    """The normalised spec, when every entry is a literal."""


def spec_call_at(lines: Sequence[str], line: int, column: int) -> SpecCall | None:
    """The innermost spec or NamedSharding call whose text holds (line, column)."""
    first = max(0, line - WINDOW)
    window = list(lines[first : line + WINDOW])
    starts = [0]
    for text in window:
        starts.append(starts[-1] + len(text) + 1)
    source = "\n".join(window)
    cursor = starts[line - first] + column if line - first < len(window) else -1
    heads = [m for m in _HEAD.finditer(source) if m.start() <= cursor and not _commented(source, m.start())]
    for head in reversed(heads):
        end = _closing(source, head.end() - 1)
        if end is None or end < cursor:
            continue
        text = source[head.start() : end + 1]
        return SpecCall(
            Span(*_position(starts, first, head.start()), *_position(starts, first, end + 1)),
            " ".join(text.split()),
            _normalised(text, head.group(1)),
        )
    return None


def _commented(source: str, offset: int) -> bool:
    """Whether `offset` follows a `#` that starts a comment on its line (quotes before it balanced)."""
    prefix = source[source.rfind("\n", 0, offset) + 1 : offset]
    for index, char in enumerate(prefix):
        if char == "#" and prefix[:index].count('"') % 2 == 0 and prefix[:index].count("'") % 2 == 0:
            return True
    return False


def _position(starts: list[int], first: int, offset: int) -> tuple[int, int]:
    index = max(i for i, start in enumerate(starts) if start <= offset)
    return first + index, offset - starts[index]


def _closing(source: str, opening: int) -> int | None:
    """The offset of the bracket closing the one at `opening`, skipping strings and comments."""
    depth, index, quote = 0, opening, ""
    while index < len(source):
        char = source[index]
        if quote:
            if char == "\\":
                index += 1
            elif source.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char in "\"'":
            quote = char * 3 if source.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char == "#":
            newline = source.find("\n", index)
            index = len(source) if newline < 0 else newline
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _normalised(text: str, callee: str) -> PartitionSpec | None:
    try:
        call = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(call, ast.Call):
        return None
    if callee in SHARDING_CALLEES:
        spec = (
            call.args[1]
            if len(call.args) > 1
            else next((k.value for k in call.keywords if k.arg == "spec"), None)
        )
        if not (isinstance(spec, ast.Call) and _callee(spec.func) in SPEC_CALLEES):
            return None
        call = spec
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    found = [_entry(arg) for arg in call.args]
    entries = [entry for entry in found if not isinstance(entry, _NotLiteral)]
    keywords = {keyword.arg: _names(keyword.value) for keyword in call.keywords}
    if len(entries) != len(found) or not set(keywords) <= {"unreduced", "reduced"}:
        return None
    unreduced, reduced = keywords.get("unreduced", ()), keywords.get("reduced", ())
    if unreduced is None or reduced is None:
        return None
    return PartitionSpec.of(
        *entries,
        unreduced=unreduced,
        reduced=reduced,
        original=" ".join(text.split()),
    )


def _names(node: ast.expr) -> tuple[str, ...] | None:
    """`{"data", "fsdp"}` or `("data",)`: the axis names of `unreduced=`/`reduced=`."""
    if not isinstance(node, ast.Set | ast.Tuple | ast.List):
        return None
    names = [
        item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]
    return tuple(names) if len(names) == len(node.elts) else None


def _callee(node: ast.expr) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None


class _NotLiteral:
    """An entry that is not a literal: the spec's normalised form is not known here."""


_NOT_LITERAL = _NotLiteral()


def _entry(node: ast.expr) -> RawEntry | _NotLiteral:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, str)):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr == "UNCONSTRAINED":
        return UNCONSTRAINED
    if isinstance(node, ast.Tuple | ast.List):
        names = [_entry(item) for item in node.elts]
        if all(name is None or isinstance(name, str) for name in names):
            return tuple(name for name in names if name is None or isinstance(name, str))
    return _NOT_LITERAL
