"""`re.search`, `re.match` and `re.fullmatch` (and a `re.compile`d pattern's methods) on a known
pattern and a known string: the rule tables real code matches parameter paths with (EasyLM's
`match_partition_rules`, t5x and big_vision's `(regex, spec)` lists), whose first match decides a
parameter's spec.

Python's own `re` answers, on the pattern as written, but only where its backtracking is known
to stay small: a short pattern and a short string (`MAX_PATTERN`, `MAX_TEXT`), only the features
of `_TRUSTED` (literals, classes, anchors, groups, alternatives, repeats), no repeat around
another repeat or around alternatives (`(a+)+`, `(a|a)*`: exponential), and at most
`MAX_BACKTRACKING` for (len(text) + 1) ** (variable repeats + 1) times the alternatives (the
worst case of the patterns left). Anything else (a backreference, a lookaround, a flag it does
not know, a pattern or string not known) is an unknown answer, never a guess. The answer is a
match (`MatchV`, never None) or None, so that `is not None`, `if m:` and `m.group(1)` are known.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.values import BoundMethod, Const, MatchV, Ref, Seq, Unknown, Value, as_int, as_str

try:
    _sre_constants: Any = importlib.import_module("re._constants")
    _sre_parser: Any = importlib.import_module("re._parser")
except ModuleNotFoundError:  # Python 3.10
    _sre_constants = importlib.import_module("sre_constants")
    _sre_parser = importlib.import_module("sre_parse")
"""The parser `re` itself uses (private, hence imported by name): a pattern's features are read
from its parse, never from its text."""

MAX_PATTERN = 256
MAX_TEXT = 256
MAX_BACKTRACKING = 1_000_000

_REPEATS = frozenset({_sre_constants.MAX_REPEAT, _sre_constants.MIN_REPEAT})
_TRUSTED = frozenset(
    {
        _sre_constants.LITERAL,
        _sre_constants.NOT_LITERAL,
        _sre_constants.ANY,
        _sre_constants.IN,
        _sre_constants.AT,
        _sre_constants.SUBPATTERN,
        _sre_constants.BRANCH,
        *_REPEATS,
    }
)
"""The pattern features whose matching cost `_cost` bounds."""

_FLAGS = {
    "re.I": re.IGNORECASE,
    "re.IGNORECASE": re.IGNORECASE,
    "re.M": re.MULTILINE,
    "re.MULTILINE": re.MULTILINE,
    "re.S": re.DOTALL,
    "re.DOTALL": re.DOTALL,
    "re.A": re.ASCII,
    "re.ASCII": re.ASCII,
    "re.X": re.VERBOSE,
    "re.VERBOSE": re.VERBOSE,
}
_KNOWN_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.ASCII | re.VERBOSE


@dataclass(frozen=True)
class RegexV(Value):
    """`re.compile(pattern, flags)` of a known pattern (whether it can be trusted is decided when
    it is matched)."""

    pattern: str
    flags: int = 0


def _flags(value: Value | None) -> int | None:
    if value is None:
        return 0
    if isinstance(value, Ref):
        return _FLAGS.get(value.qualname)
    flags = as_int(value)
    return flags if flags is not None and flags & ~_KNOWN_FLAGS == 0 else None


def _cost(items: object, length: int, inside_repeat: bool = False) -> int | None:
    """A bound on the backtracking of a parsed pattern on a string of `length`; None when the
    pattern has a feature outside `_TRUSTED` or a repeat that could backtrack exponentially."""
    total = 1
    for op, argument in items:  # type: ignore[attr-defined]
        if op not in _TRUSTED:
            return None
        if op in _REPEATS:
            low, high, body = argument
            if inside_repeat and high > 1:
                return None
            inner = _cost(body, length, inside_repeat or high > 1)
            if inner is None:
                return None
            total *= inner * ((length + 1) if high > low else 1)
        elif op == _sre_constants.BRANCH:
            if inside_repeat:
                return None
            branches = [_cost(branch, length, inside_repeat) for branch in argument[1]]
            if any(b is None for b in branches):
                return None
            total *= sum(b for b in branches if b is not None)
        elif op == _sre_constants.SUBPATTERN:
            inner = _cost(argument[3], length, inside_repeat)
            if inner is None:
                return None
            total *= inner
        if total > MAX_BACKTRACKING:
            return None
    return total


def matched(pattern: str, flags: int, text: str, how: str) -> Value:
    """`re.<how>(pattern, text, flags)` when it is safe to ask Python, else unknown."""
    if len(pattern) > MAX_PATTERN or len(text) > MAX_TEXT:
        return Unknown("a regular expression or string too long to match here")
    try:
        parsed = _sre_parser.parse(pattern, flags)
        compiled = re.compile(pattern, flags)
    except (re.error, RecursionError, OverflowError, ValueError):
        return Unknown("an invalid regular expression")
    cost = _cost(list(parsed), len(text))
    if cost is None or cost * (len(text) + 1) > MAX_BACKTRACKING:
        return Unknown("a regular expression whose matching shardls does not bound")
    found = getattr(compiled, how)(text)
    if found is None:
        return Const(None)
    return MatchV((found.group(0), *found.groups()))


def _known(pattern: Value | None, text: Value | None, flags: Value | None, how: str) -> Value:
    source: str | None
    bits: int | None
    if isinstance(pattern, RegexV):
        if flags is not None:
            return Unknown("flags given to a compiled pattern")
        source, bits = pattern.pattern, pattern.flags
    else:
        source, bits = as_str(pattern) if pattern is not None else None, _flags(flags)
    string = as_str(text) if text is not None else None
    if source is None or string is None:
        return Unknown(f"re.{how}() of a pattern or string not known here")
    if bits is None:
        return Unknown(f"re.{how}() with flags shardls does not read")
    return matched(source, bits, string, how)


@calls("re.search", "re.match", "re.fullmatch")
def _match(call: CallArgs) -> Value | None:
    how = call.qualname.rsplit(".", 1)[-1]
    return _known(call.get(0, "pattern"), call.get(1, "string"), call.get(2, "flags"), how)


@calls("re.compile")
def _compile(call: CallArgs) -> Value | None:
    pattern, flags = call.get(0, "pattern"), _flags(call.get(1, "flags"))
    source = as_str(pattern) if pattern is not None else None
    if isinstance(pattern, RegexV):
        return pattern
    if source is None or flags is None:
        return Unknown("re.compile() of a pattern not known here")
    return RegexV(source, flags)


@methods(RegexV, "search", "match", "fullmatch")
def _compiled_match(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    if len(call.args) > 1 or set(call.kwargs) - {"string"}:
        return Unknown(f".{method.name}() from a position")
    return _known(method.base, call.get(0, "string"), None, method.name)


@methods(MatchV, "group", "groups")
def _groups(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, MatchV)
    groups = method.base.groups
    if method.name == "groups":
        return Seq(tuple(Const(g) for g in groups[1:])) if not call.args else None
    indices = [as_int(a) for a in call.args] or [0]
    if any(i is None or not 0 <= i < len(groups) for i in indices):
        return Unknown("a group of a match not known here")
    found = [Const(groups[i]) for i in indices if i is not None]
    return found[0] if len(found) == 1 else Seq(tuple(found))
