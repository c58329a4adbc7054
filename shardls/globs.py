"""Gitignore-style patterns, for `.gitignore` files and the `exclude` setting alike.

One syntax for both means a user who knows .gitignore knows `exclude`. The subset of gitignore
implemented (enough for real projects, without a dependency):

* blank lines and `#` comments; `\\#` and `\\!` for a literal first character;
* `!pattern` re-includes what an earlier pattern excluded (the last match wins);
* `dir/` matches directories only;
* a pattern with a `/` before its end is anchored to the pattern file's folder, one without
  matches at any depth (`*.pyc`, `build/`);
* `*`, `?`, `[abc]`/`[!abc]`, and `**` for any number of folders (`**/x`, `x/**`, `a/**/b`).

Not implemented: escaped trailing spaces and the rule that a file in an excluded folder cannot
be re-included (callers get it for free by not walking excluded folders).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
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

    @classmethod
    def read(cls, ignore_file: Path) -> PatternSet | None:
        """A .gitignore file's patterns, or None when it cannot be read (then it ignores nothing)."""
        try:
            text = ignore_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        return cls.parse(ignore_file.parent, text.splitlines())

    def match(self, path: Path, is_dir: bool) -> bool | None:
        """True: excluded; False: re-included by a `!` pattern; None: no pattern is about `path`."""
        try:
            relative = PurePosixPath(path.relative_to(self.base)).as_posix()
        except ValueError:
            return None
        verdict = None
        for pattern in self.patterns:
            if (is_dir or not pattern.directories_only) and pattern.regex.fullmatch(relative):
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
    if negated or text[:2] in ("\\#", "\\!"):
        text = text[1:]
    directories_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    body = _translate(text.lstrip("/"))
    return _Pattern(re.compile(body if anchored else f"(?:.*/)?{body}"), negated, directories_only)


def _translate(glob: str) -> str:
    """A glob as a regular expression over `/`-separated relative paths."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) != -1:
            members = glob[i + 1 : end]
            negate = members[:1] in ("!", "^")
            out.append("[" + ("^" if negate else "") + re.escape(members[negate:]).replace("\\-", "-") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)
