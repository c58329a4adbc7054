"""Which "line N" a file's string literals could put into a text (a value shown as written), so
that the lines the analysis names in its texts are moved everywhere else."""

from __future__ import annotations

import ast

import pytest

from shardls.analysis.literal_lines import segment_lines


def _could_make(code: str, number: str) -> bool:
    return segment_lines(code, tuple(ast.parse(code).body)).could_make(number)


@pytest.mark.parametrize(
    "code",
    [
        'LABEL = f"line {n}"',
        'LABEL = "line " + str(n)',
        'LABEL = "line %d" % n',
        'LABEL = "at line {}".format(n)',
        'LABEL = f"{name} line{n}"',
        'LABEL = "LINE".lower()',
        "LABEL = b'line '",
    ],
)
def test_a_line_word_any_number_may_follow_makes_every_line(code: str) -> None:
    assert _could_make(code, "7")
    assert _could_make(code, "3512")


@pytest.mark.parametrize(
    "code",
    [
        'KEYS = ("linear1", "linear2")',
        'LABEL = "lines 5"',
        'LABEL = "line_count"',
        'LABEL = "line: 5"',
        'LABEL = "line of the mesh"',
        'LABEL = "baseline 5"',
        'LABEL = "line 5a"',
        '"""A docstring at line 5, never read."""',
    ],
)
def test_other_words_make_no_line(code: str) -> None:
    assert not _could_make(code, "5")


def test_a_numbered_line_makes_its_number_and_digits_joined_to_its_end() -> None:
    assert _could_make('AXIS = "line 14"', "14")
    assert _could_make('AXIS = "line 14"', "145")  # "line 14" + "5"
    assert not _could_make('AXIS = "line 14"', "4")
    assert not _could_make('AXIS = "line 14"', "15")
    assert _could_make('NOTE = "see line 12 below"', "12")
    assert not _could_make('NOTE = "see line 12 below"', "123")
