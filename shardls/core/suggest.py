"""`did you mean ...?` for a word that is not one of the words shardls knows (a config key, a
dtype, a rule code, a command-line value): one wording and one closeness everywhere."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The known word most like `word` (case-insensitively), if any is close enough."""
    by_lower = {choice.lower(): choice for choice in choices}
    found = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'device-count'?)` to write after the unknown word, or `''`."""
    match = closest(word, choices)
    return f" (did you mean {match!r}?)" if match is not None else ""
