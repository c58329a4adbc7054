"""A pattern that names one thing at any depth (`*.pyc`, `build/`, `__pycache__`), most of a
.gitignore, is matched by the path's last name alone (`PathGlob.matches`): the same answer as
the general matching of its runs, on seeded random paths."""

from __future__ import annotations

import random

from shardls.globs import NameGlob, PathGlob

NAMES = ("build", "a.pyc", "x.py", "data_1", "data_x", ".cache", "b", "*", "a b", "é.py")
PATTERNS = ("build", "*.pyc", "*.py", "data_[0-9]", "data_?", ".*", "b*", "*a*b*", "\\*", "é*")


def test_a_pattern_at_any_depth_matches_as_its_runs_do() -> None:
    rng = random.Random(3)
    for pattern in PATTERNS:
        fast = PathGlob.parse(pattern, anchored=False)
        assert len(fast.runs) == 2 and not fast.runs[0] and len(fast.runs[1]) == 1
        general = PathGlob(((), (), *fast.runs[1:]))  # an empty run between: the same pattern
        for _ in range(300):
            path = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 4)))
            assert fast.matches(path) == general.matches(path), (pattern, path)
    assert PathGlob.parse("*.pyc", anchored=False).matches("src/a.pyc")
    assert not PathGlob.parse("build", anchored=False).matches("build/x.py")
    assert NameGlob.parse("data_[0-9]").matches("data_1")
