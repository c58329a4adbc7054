"""The string scanner behind completion and navigation, on text being typed."""

from __future__ import annotations

from shardls.analysis.facts import Span
from shardls.server.strings import literal_at, string_literals

TEXT = '''\
mesh = jax.make_mesh((2, 4), ("data", "model"))  # "not a string"
p = nnx.Param(x, sharding=(None, "model"), name="w")
RULES = (("embed", "data"),)
doc = """a "quoted"
word"""
y = P(None, "mo
'''.splitlines()


def test_literals_know_what_they_are_written_in() -> None:
    found = {(lit.span.line, lit.value): lit for lit in string_literals(TEXT)}

    assert sorted(found) == [
        (0, "data"),
        (0, "model"),
        (1, "model"),
        (1, "w"),
        (2, "data"),
        (2, "embed"),
        (3, 'a "quoted"\nword'),
        (5, "mo"),
    ]
    assert found[(0, "model")].heads == ("make_mesh",) and found[(0, "model")].names_axis
    assert not found[(0, "model")].in_spec
    assert found[(1, "model")].heads == ("sharding", "Param") and found[(1, "model")].in_spec
    assert not found[(1, "w")].names_axis
    assert (found[(2, "embed")].index, found[(2, "data")].index) == (0, 1)
    assert found[(2, "embed")].bracket == found[(2, "data")].bracket
    assert found[(3, 'a "quoted"\nword')].span == Span(3, 6, 4, 7)


def test_the_literal_at_the_cursor_even_unterminated() -> None:
    typing = literal_at(TEXT, 5, 15)
    assert typing is not None and typing.value == "mo" and typing.in_spec
    assert typing.content == Span(5, 13, 5, 15)
    assert literal_at(TEXT, 0, 60) is None  # inside a comment
    assert literal_at(TEXT, 0, 2) is None
