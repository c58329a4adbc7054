"""Gitignore-style patterns, for `.gitignore` files and the `exclude` setting alike.

One syntax for both means a user who knows .gitignore knows `exclude`. The subset of gitignore
implemented (enough for real projects, without a dependency):

* blank lines and `#` comments; `\\` makes the next character literal (`\\#`, `\\!`, `\\*`);
* `!pattern` re-includes what an earlier pattern excluded (the last match wins);
* `dir/` matches directories only;
* a pattern with a `/` before its end is anchored to the pattern file's folder, one without
  matches at any depth (`*.pyc`, `build/`);
* `*`, `?`, `[abc]`/`[!abc]`/`[a-z]` within one name; `**` as a whole name for any number of
  folders (`**/x`, `a/**/b`; a trailing `x/**` is everything inside `x`); any other `**` is a `*`,
  as in git.

Not implemented: escaped trailing spaces and the rule that a file in an excluded folder cannot
be re-included (callers get it for free by not walking excluded folders).

Matching takes time linear in the path for a given pattern, whatever the pattern: a `.gitignore`
comes from the workspace, and a regular expression with several `*` (`*a*a*a*a*a*a*a*ab`)
backtracks exponentially on a long name. A name is matched by the pieces between its `*`s, each
of fixed length, placed leftmost one after the other (leftmost placement leaves the most room
for the rest, so it finds a match whenever there is one); a path is matched by its names the
same way, the pattern's `**` names standing for the `*`s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_ANY_NAMES = "**"
"""A pattern name that stands for any number of names."""
_NOTHING = "(?!)"
"""A character no character matches."""


@dataclass(frozen=True)
class NameGlob:
    """One name of a pattern (`*.py`, `data_[0-9]?`): the fixed-length pieces between its `*`s."""

    pieces: tuple[re.Pattern[str], ...]
    """One more than the number of `*`: the first is anchored at the start, the last at the end."""
    lengths: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> NameGlob:
        pieces: list[list[str]] = [[]]
        i = 0
        while i < len(text):
            char = text[i]
            if char == "\\" and i + 1 < len(text):
                pieces[-1].append(re.escape(text[i + 1]))
                i += 2
                continue
            if char == "*":
                if pieces[-1] or len(pieces) == 1:  # `**` inside a name is one `*`
                    pieces.append([])
            elif char == "?":
                pieces[-1].append(".")
            elif char == "[" and (end := text.find("]", i + 2)) != -1:
                pieces[-1].append(_character_class(text[i + 1 : end]))
                i = end
            else:
                pieces[-1].append(re.escape(char))
            i += 1
        return cls(tuple(re.compile("".join(p), re.DOTALL) for p in pieces), tuple(map(len, pieces)))

    def matches(self, name: str) -> bool:
        first, last = self.pieces[0], self.pieces[-1]
        if len(self.pieces) == 1:
            return first.fullmatch(name) is not None
        if first.match(name) is None:
            return False
        position = self.lengths[0]
        for piece in self.pieces[1:-1]:
            found = piece.search(name, position)
            if found is None:
                return False
            position = found.end()
        start = len(name) - self.lengths[-1]
        return start >= position and last.fullmatch(name, start) is not None


def _character_class(members: str) -> str:
    """`[abc]`, `[!a-z]` or `[^a-z]` as a regular-expression class (it never matches `/`: names
    hold none)."""
    negate = members[:1] in ("!", "^")
    body = re.escape(members[negate:]).replace("\\-", "-")
    token = "[" + ("^" if negate else "") + body + "]"
    try:
        re.compile(token)
    except re.error:  # a range backwards (`[z-a]`) matches nothing, as in git
        return _NOTHING
    return token


@dataclass(frozen=True)
class PathGlob:
    """A pattern over `/`-separated relative paths: name globs, and `**` for any run of names."""

    runs: tuple[tuple[NameGlob, ...], ...]
    """The name globs between the `**`s; like `NameGlob.pieces`, first and last are anchored."""
    inside: bool = False
    """A trailing `/**`: at least one name must follow (`x/**` is what is inside `x`)."""

    @classmethod
    def parse(cls, text: str, anchored: bool) -> PathGlob:
        names = text.split("/")
        inside = len(names) > 1 and names[-1] == _ANY_NAMES
        if not anchored:
            names = [_ANY_NAMES, *names]
        runs: list[list[NameGlob]] = [[]]
        for name in names:
            if name == _ANY_NAMES:
                if runs[-1] or len(runs) == 1:
                    runs.append([])
            else:
                runs[-1].append(NameGlob.parse(name))
        return cls(tuple(map(tuple, runs)), inside)

    def matches(self, path: str) -> bool:
        if len(self.runs) == 2 and not self.runs[0] and len(self.runs[1]) == 1 and not self.inside:
            # `name` at any depth (`*.pyc`, `build/`), most of a .gitignore: its last name. Each
            # folder and file `check` lists is matched against every such pattern.
            return self.runs[1][0].matches(path.rpartition("/")[2])
        names = path.split("/")
        if len(self.runs) == 1:
            return _run_at(self.runs[0], names, 0) and len(names) == len(self.runs[0])
        first, last = self.runs[0], self.runs[-1]
        if not _run_at(first, names, 0):
            return False
        position = len(first)
        for run in self.runs[1:-1]:
            found = next(
                (i for i in range(position, len(names) - len(run) + 1) if _run_at(run, names, i)), None
            )
            if found is None:
                return False
            position = found + len(run)
        start = len(names) - len(last)
        if self.inside and start <= position:
            return False
        return start >= position and _run_at(last, names, start)


def _run_at(run: Sequence[NameGlob], names: Sequence[str], start: int) -> bool:
    return start + len(run) <= len(names) and all(
        glob.matches(names[start + i]) for i, glob in enumerate(run)
    )


@dataclass(frozen=True)
class _Pattern:
    glob: PathGlob
    negated: bool
    directories_only: bool


@dataclass(frozen=True)
class PatternSet:
    """The patterns of one source (a .gitignore file, the exclude list), relative to `base`."""

    base: Path
    patterns: tuple[_Pattern, ...]

    @classmethod
    def parse(cls, base: Path, lines: Iterable[str]) -> PatternSet:
        return cls(base, tuple(pattern for line in lines if (pattern := _compile(line)) is not None))

    def match(self, path: Path, is_dir: bool) -> bool | None:
        """True: excluded; False: re-included by a `!` pattern; None: no pattern is about `path`."""
        try:
            relative = PurePosixPath(path.relative_to(self.base)).as_posix()
        except ValueError:
            return None
        verdict = None
        for pattern in self.patterns:
            if (is_dir or not pattern.directories_only) and pattern.glob.matches(relative):
                verdict = not pattern.negated
        return verdict


def excluded(pattern_sets: Iterable[PatternSet], path: Path, is_dir: bool) -> bool:
    """Whether the last set with an opinion excludes `path` (later sets are deeper, so they win)."""
    verdict = False
    for patterns in pattern_sets:
        found = patterns.match(path, is_dir)
        if found is not None:
            verdict = found
    return verdict


def _compile(line: str) -> _Pattern | None:
    text = line.rstrip()
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    directories_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    return _Pattern(PathGlob.parse(text.lstrip("/"), anchored), negated, directories_only)
