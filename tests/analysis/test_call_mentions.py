"""`CallMentions` (walking/call_mentions.py) reads whether a statement's text may call something
from the lines of its segment where the test matches, found once per segment: it must answer
exactly as testing the statement's own text does, for every statement at every depth of
shardls' own sources and examples and of programs written to put calls across lines."""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardls.analysis.mesh_pass import _mesh_calls_pattern
from shardls.analysis.recognition import calls_pattern
from shardls.analysis.source import Segment, SegmentParser
from shardls.analysis.walking.call_mentions import CallMentions
from shardls.analysis.walking.call_syntax import mentions, node_text
from shardls.analysis.walking.text_tests import NamedCalls

ROOT = Path(__file__).resolve().parents[2]

ACROSS_LINES = [
    "x = f\n(1)\n",
    "x = (f\n    (1))\ny = g(2)\n",
    "def outer():\n    a = (b)\n    (c)\n    return jax.jit\\\n(h)\n",
    "class C:\n    def __init__(self):\n        self.w = init\\\n  (x)\n    def f(self): return f\n",
    "if x:\n    y = z(out_sharding\n      =s)\nelse:\n    put (x)\n",
    "for i in r:\n    q = (lambda: 1)\\\n()\n    mesh = Mesh(d, ('a',)); put(x)\n",
    "with jax.set_mesh(m):\n    y = f(\n        g(x))\n    z = [put\n(1) for _ in y]\n",
    "try:\n    a = b\nexcept E:\n    init = 1\nfinally:\n    c = d \\\n  (e)\n",
]
CALLEES = (None, "f", "put", "init", "__init__", "jit", "g", "x", "jax.jit", "Mesh")


def _segments() -> Iterator[Segment]:
    parser = SegmentParser()
    paths = sorted((ROOT / "shardls").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
    for text in [*ACROSS_LINES, *(path.read_text() for path in paths)]:
        yield from parser.parse(text).segments


def _statements(segment: Segment) -> Iterator[ast.stmt]:
    for stmt in segment.body:
        yield from (node for node in ast.walk(stmt) if isinstance(node, ast.stmt))


SEGMENTS = list(_segments())


@pytest.mark.parametrize("test", [calls_pattern(), _mesh_calls_pattern()], ids=["sites", "meshes"])
def test_a_statement_may_call_as_its_own_text_says(test: NamedCalls) -> None:
    answers = CallMentions(test)
    disagreements, asked, found = [], 0, 0
    for segment in SEGMENTS:
        for stmt in _statements(segment):
            text = node_text(segment, stmt)
            for callee in CALLEES:
                expected = bool(test.search(text)) if callee is None else mentions(text, callee)
                asked += 1
                found += expected
                if answers.may_call(stmt, segment, callee) != expected:
                    disagreements.append((text, callee, expected))
    assert disagreements == []
    assert asked > 100_000 and 0 < found < asked


def test_a_whole_word_is_found_where_a_word_boundary_pattern_finds_it() -> None:
    """`mentions` (and so `CallMentions`) finds an identifier exactly where a pattern bounded
    by `(?<!\\w)` and `(?!\\w)` on both sides finds it, in seeded random texts over a small
    alphabet where words overlap, repeat and touch other words."""
    rng = random.Random(7)
    alphabet = "ab_1 .(\n"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        word = rng.choice(["a", "b", "ab", "aa", "a_b", "_", "ba1"])
        expected = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None
        assert mentions(text, word) is expected, (text, word)
