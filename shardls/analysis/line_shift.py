"""Results kept across an edit that added or removed lines, moved to the lines they now describe.

An Enter or a deleted line moves every segment below it; their texts and trees are the same, so
what their analyses found still holds, but at other lines: the spans of sites and diagnostics,
and the lines named in texts ("literal at line 28", "arguments from f(...) at line 335"), of
the segment itself and of any other segment it read. One map per edit says where each old line
went (`LineMap`: above the edit it stays, below it moves by the edit's `delta`); a kept result
is rebuilt through it (`Shifter`), or, where the map cannot say for sure, it is analysed again
(`Unshiftable`):

- a line inside the edited segments has no place in the map;
- a text's "line N" is moved only where it must be one of this file's lines: not when the
  result read another module (a function of it is rendered at its own lines, "at line N" with no
  path) nor when a string literal of the file could make that very "line N" (a value shown in a
  text reads as it was written, `literal_lines`), nor in an object of another file (`path`: its
  spans are that file's and stay); there a "line N" the map would move makes the result
  unshiftable;
- an object the walk does not know (anything but plain values, containers and dataclasses)
  makes it unshiftable too.

Texts are rewritten only where the analysis wrote them: every line the analysis renders into a
text is `line {number}` (1-based), which is what `_LINE` reads back.
"""

from __future__ import annotations

import enum
import functools
import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, cast

from shardls.analysis.facts import Span
from shardls.analysis.literal_lines import LiteralLines
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.source import Segment

_LINE = re.compile(r"\bline (\d+)\b")
_PLAIN = (int, float, complex, bool, bytes, type(None), enum.Enum)


class Unshiftable(Exception):
    """A kept result whose lines the map cannot move for sure: it is analysed again."""


@dataclass(frozen=True)
class LineMap:
    """Where an edit moved the lines of the previous text (0-based): those before `start` stay,
    those from `stop` on move `delta` down, those between were edited and have no place."""

    start: int
    stop: int
    delta: int
    kept: tuple[tuple[int, int], ...] = ()
    """Ranges of lines between `start` and `stop` (the last excluded) that stay: those of a
    segment the edit left at its place with its tree (a pass over several changes, a comment
    typed in one and a line added in another, sees one edit from the first to the last)."""
    then: LineMap | None = None
    """Where the next edit moved the lines, when the change was made in steps (`steps_between`:
    one region of lines at a time)."""

    def line(self, old: int) -> int:
        if old < self.start:
            new = old
        elif old >= self.stop:
            new = old + self.delta
        elif any(first <= old < last for first, last in self.kept):
            new = old
        else:
            raise Unshiftable(f"line {old + 1} was edited")
        return new if self.then is None else self.then.line(new)


Hot = tuple[str | int, ...]
"""The fields (a dataclass) or items (a tuple or list) of an object that hold a span or a text
naming a line; none: the object holds nothing a map moves."""


@dataclass
class Plans:
    """What a shift met (`Shifter.plans`): each object's `Hot` fields by the object's id, and the
    objects themselves, which keeps their ids theirs. A list beside the map, not a pair per
    entry: an Enter at the top of a 20k-line file meets ~94,000 objects, and a pair each was
    6.4 MiB kept, twice at an Enter's peak (the last move's and this one's)."""

    hot: dict[int, Hot] = field(default_factory=dict)
    held: list[object] = field(default_factory=list)

    def add(self, value: object, hot: Hot) -> None:
        if id(value) not in self.hot:
            self.held.append(value)
        self.hot[id(value)] = hot


class Shifter:
    """Rebuilds values through a `LineMap`, sharing what it rebuilt (a mesh fact many sites hold
    is rebuilt once) and handing back the very object where nothing moved."""

    def __init__(self, lines: LineMap, path: str, literals: LiteralLines, plans: Plans | None = None) -> None:
        """`path`: the file's (an object of another `path` is that file's); `literals`: the
        "line N" the file's literals could make, which are not moved (see the module's
        docstring); `plans`: the `plans` of the shifter of the edit before."""
        self.lines = lines
        self.path = path
        self.literals = literals
        self._done: dict[int, object] = {}
        """What each object met became, by its id and how it was moved (`trusted`, `foreign`)
        in one number: keys of three and entries of two made the first Enter's walk of a 20k-line
        file's 66,000 objects hold 13 MiB until it ended."""
        self._walked: list[object] = []
        """The objects `_done` holds an answer for, alive while the shift runs (which keeps
        their ids theirs)."""
        self._texts: dict[tuple[str, bool], str] = {}
        self._known = {} if plans is None else plans.hot
        self._hot: dict[Hot, Hot] = {}
        """Each plan's fields or items once (the sites of a file share a few)."""
        self.plans = Plans()
        """Where each object this shift made holds what a map moves, by id, and the outermost
        objects in them that hold none: the results it moved share them, so the next edit's
        shifter walks only those fields and items, and hands back the others as they are. An Enter moves every result below it, and
        walking every field of each site, spec and layout again took most of its time at 20k
        lines. Holding the objects here keeps their ids theirs."""

    def value(self, value: object, trusted: bool = True, foreign: bool = False) -> object:
        """`value` at the lines the map gives (`trusted`: also the result it is part of lets
        texts be moved; `foreign`: it is another file's, as if its `path` said so)."""
        return self._value(value, trusted, foreign)[0]

    def values(self, values: Iterable[object], trusted: bool = True) -> list[object]:
        moved = []
        for value in values:
            made, held = self._value(value, trusted, False)
            if held:
                self._keep(value)
            moved.append(made)
        return moved

    def _value(self, value: object, trusted: bool, foreign: bool) -> tuple[object, bool]:
        """`value` moved, and whether it holds nothing a map moves (it is then `value`)."""
        kind = type(value)
        if kind is Span:  # most of what moves: no plan, no memo
            return (value if foreign else self._span(cast(Span, value))), False
        if kind is str:
            if "line " not in cast(str, value):
                return value, True
            return self._text(cast(str, value), trusted and not foreign), False
        if isinstance(value, _PLAIN):
            return value, True
        if isinstance(value, str):
            return self._text(value, trusted and not foreign), "line " not in value
        key = id(value)
        hot = self._known.get(key)
        if hot is None:
            hot = self.plans.hot.get(key)
        if hot == ():
            return value, True
        done_key = key << 2 | trusted << 1 | foreign
        done = self._done.get(done_key)
        if done is not None:
            return done, False
        made, hot = self._made(value, trusted, foreign, hot)
        self._done[done_key] = made
        self._walked.append(value)
        if hot:
            self.plans.add(made, self._hot.setdefault(hot, hot))
        return made, hot == ()

    def _keep(self, value: object) -> None:
        """Keep an object that holds nothing a map moves among the plans, when a moved value
        holds it (what it holds itself is not walked again, so it needs none)."""
        if not isinstance(value, (str, *_PLAIN)):
            self.plans.add(value, ())

    def _made(
        self, value: object, trusted: bool, foreign: bool, hot: Hot | None
    ) -> tuple[object, Hot | None]:
        """`value` moved, walking only its `hot` fields or items when known, and the fields or
        items of it that hold what a map moves (None: not kept for a span, a set or a dict)."""
        if isinstance(value, Span):
            return (value if foreign else self._span(value)), None
        if isinstance(value, (tuple, list)):
            items = list(value)
            found: list[str | int] = []
            inert = []
            for index in range(len(items)) if hot is None else cast(tuple[int, ...], hot):
                items[index], held = self._value(items[index], trusted, foreign)
                if not held:
                    found.append(index)
                elif hot is None:
                    inert.append(items[index])
            if found:
                for item in inert:
                    self._keep(item)
            if all(a is b for a, b in zip(items, value)):
                return value, tuple(found)
            return type(value)(items), tuple(found)
        if isinstance(value, frozenset):
            moved = [self._value(item, trusted, foreign) for item in value]
            if all(a is b for (a, _), b in zip(moved, value)):
                return value, () if all(held for _, held in moved) else None
            return frozenset(item for item, _ in moved), None
        if isinstance(value, dict):
            pairs = [
                (self._value(k, trusted, foreign), self._value(v, trusted, foreign)) for k, v in value.items()
            ]
            if all(a[0] is k and b[0] is v for (a, b), (k, v) in zip(pairs, value.items())):
                return value, () if all(k[1] and v[1] for k, v in pairs) else None
            return {k[0]: v[0] for k, v in pairs}, None
        if is_dataclass(value) and not isinstance(value, type):
            path = getattr(value, "path", None)
            inner = foreign or (isinstance(path, str) and path != self.path)
            changes = {}
            names: list[str | int] = []
            held_fields = []
            for name in _init_fields(type(value)) if hot is None else cast(tuple[str, ...], hot):
                before = getattr(value, name)
                after, held = self._value(before, trusted, inner)
                if not held:
                    names.append(name)
                elif hot is None:
                    held_fields.append(before)
                if after is not before:
                    changes[name] = after
            if names:
                for held_field in held_fields:
                    self._keep(held_field)
            return (rebuilt(value, changes) if changes else value), tuple(names)
        raise Unshiftable(f"cannot move a {type(value).__name__}")

    def _span(self, span: Span) -> Span:
        line, end = self.lines.line(span.line), self.lines.line(span.end_line)
        if line == span.line and end == span.end_line:
            return span
        if type(span) is Span:
            return Span(line, span.column, end, span.end_column)
        return cast(Span, rebuilt(span, {"line": line, "end_line": end}))

    def _text(self, text: str, movable: bool) -> str:
        """`text` with the lines it names moved; asked once per text (each of a 20k-line file's
        4,445 sites says "make_mesh at line 10")."""
        key = (text, movable)
        done = self._texts.get(key)
        if done is None:
            done = self._texts[key] = self._moved_text(text, movable)
        return done

    def _moved_text(self, text: str, movable: bool) -> str:
        def moved(match: re.Match[str]) -> str:
            number = int(match.group(1))
            now = self.lines.line(number - 1) + 1
            if now != number and (not movable or self.literals.could_make(match.group(1))):
                raise Unshiftable(f"cannot tell which file's line {number} a text names")
            return f"line {now}"

        return _LINE.sub(moved, text)


def rebuilt(value: Any, changes: dict[str, object]) -> object:
    """A dataclass `value` with `changes` to its fields. Copied with its attributes where its
    `__init__` only sets them (no `__post_init__`, no slots): `dataclasses.replace` calls the
    `__init__` of a site with all its 23 fields, 7 µs, and an Enter at the top of a 20k-line
    file rebuilt 5,000 sites and 2,226 segment results. Only the fields are copied (a cached
    property is made again).

    Set one attribute at a time, in the order of the fields, as `__init__` sets them, and read
    without `__dict__`: the instance then keeps its values in its class's shared layout. Filling
    its `__dict__` instead made each a dictionary of its own, three times the size (a site 900
    bytes instead of 290): the results an Enter at the top of a 20k-line file moved kept 17 MiB
    more than the same results analysed afresh, the server's peak memory."""
    kind: type = type(value)
    if hasattr(kind, "__post_init__") or not hasattr(value, "__dict__"):
        return replace(value, **changes)
    names = _init_fields(kind)
    made: Any = object.__new__(kind)
    for name, item in zip(names, _field_values(kind)(value)):
        _set(made, name, changes.get(name, item) if changes else item)
    return made


_set = object.__setattr__
"""Sets a field of a frozen dataclass, as its own `__init__` does."""


@functools.lru_cache(maxsize=256)
def _field_values(kind: type) -> Callable[[object], tuple[object, ...]]:
    """Reads the fields a dataclass is rebuilt from, in order, in one call."""
    names = _init_fields(kind)
    if len(names) < 2:  # `attrgetter` of one name gives the value, not a tuple; of none, nothing
        return lambda value: tuple(getattr(value, name) for name in names)
    return cast(Callable[[object], tuple[object, ...]], operator.attrgetter(*names))


@functools.lru_cache(maxsize=256)
def _init_fields(kind: type) -> tuple[str, ...]:
    """The fields a dataclass is rebuilt from. Those it does not take are made from them in its
    `__post_init__` (`Mesh.sizes_by_name`), and made again; a class that has such fields and no
    `__post_init__` is not rebuilt."""
    found = fields(kind)
    if any(not f.init for f in found) and not hasattr(kind, "__post_init__"):
        raise Unshiftable(f"cannot move a {kind.__name__}")
    return tuple(f.name for f in found if f.init)


_STEPS = 16
"""The most modules `line_map` follows back from the one analysed (a change made in steps has
at most `text_diff._MAX_REGIONS`)."""


def line_map(before: ModuleInfo, now: ModuleInfo) -> tuple[LineMap, dict[int, Segment]] | None:
    """Where the edit from `before` to `now` (modules of one file, `now` made from `before`,
    directly or through the steps of a change of several regions) moved `before`'s lines, and
    the segment each moved segment of `before` became (by the old segment's id); None when it
    moved none or what the edit did is not known."""
    chain = [now]
    while chain[-1] is not before:
        earlier = chain[-1].previous() if chain[-1].previous is not None else None
        if earlier is None or len(chain) > _STEPS:
            return None
        chain.append(earlier)
    steps = [_step_map(chain[i], chain[i - 1]) for i in range(len(chain) - 1, 0, -1)]
    made = [step for step in steps if step is not None]
    if len(made) < len(steps) or not any(step.delta for step, _ in made):
        return None
    lines: LineMap | None = None
    for step, _ in reversed(made):
        lines = replace(step, then=lines)
    assert lines is not None
    images = {id(segment): segment for segment in before.source.segments}
    """The segment each of `before`'s has become so far, by its id."""
    for (_, moved), module in zip(made, reversed(chain[:-1])):
        present = {id(segment) for segment in module.source.segments}
        for key, image in list(images.items()):
            if id(image) in moved:
                images[key] = moved[id(image)]
            elif id(image) not in present:
                del images[key]
    return lines, {key: image for key, image in images.items() if id(image) != key}


def _step_map(before: ModuleInfo, now: ModuleInfo) -> tuple[LineMap, dict[int, Segment]] | None:
    """`line_map` of one edit, `now` made from `before` (its `LineMap`'s delta may be 0)."""
    from shardls.analysis.scope_edit import edited_window

    edit = now.source.edit
    if edit is None or edit.previous() is not before.source:
        return None
    window = edited_window(before.source, now.source)
    start, stop = edit.lines
    at = {segment.first_line: segment for segment in now.source.segments[: window.new_end]}
    kept = []
    for segment in before.source.segments[: window.old_end]:
        same = at.get(segment.first_line)
        end = segment.first_line + len(segment.lines)
        if same is not None and same.body is segment.body and segment.first_line < stop and end > start:
            kept.append((segment.first_line, segment.first_line + min(len(segment.lines), len(same.lines))))
    lines = LineMap(start, stop, edit.delta, tuple(kept))
    return lines, window.moved(before.source.segments, now.source.segments)
