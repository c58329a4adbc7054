"""The walker's text tests (`walking/text_tests.py`) and the call index's name search answer
exactly as the regular expressions they replace, on seeded random texts made of the fragments
those expressions look for (and near misses) and on every top-level statement of shardls' own
sources and examples."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from shardls.analysis import module_info
from shardls.analysis.mesh_pass import _mesh_calls_pattern
from shardls.analysis.recognition import TRIGGER, _interesting_names, calls_pattern
from shardls.analysis.source import SegmentParser
from shardls.analysis.walking.call_syntax import mentions
from shardls.analysis.walking.text_tests import NamedCalls

ROOT = Path(__file__).resolve().parents[2]
TRIGGER_EXPRESSION = re.compile(
    r"Mesh|mesh|PartitionSpec|\bPS?\(|Sharding|device_put|sharding|reshard|shard_map|with_partitioning|"
    r"nnx\.|Param\(|Linear|Embed|Conv|Einsum|Norm\(|Attention|ShapeDtypeStruct|jit|Dense|partitioning"
)
CALLED_NAME_EXPRESSION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
FRAGMENTS = (
    "P", "PS", "xP", "_P", "1P", "(", ")", " ", "\n", "\t", ".", "=", ",", "é", "2", "_", "x",
    "zeros", "Dense", "DenseGeneral", "mesh", "Mes", "Norm", "Param", "nnx", "jit", "pjit",
    "out_sharding", "out_shardings", "make_mesh", "Mesh", "set_mesh", "f", "init", "__init__",
)  # fmt: skip


def _random_texts(count: int) -> list[str]:
    rng = random.Random(7)
    return ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def _own_statements() -> list[str]:
    parser = SegmentParser()
    paths = sorted((ROOT / "shardls").rglob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))
    return [segment.text for path in paths for segment in parser.parse(path.read_text()).segments]


TEXTS = _random_texts(20_000) + _own_statements()


def _named_calls_expression(names: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(map(re.escape, sorted(names)))
    return re.compile(r"\b(?:" + alternatives + r")\s*\(|\)\s*\(|\bout_sharding\s*=")


def test_the_site_trigger_answers_as_its_regular_expression() -> None:
    assert [TRIGGER.search(t) for t in TEXTS] == [bool(TRIGGER_EXPRESSION.search(t)) for t in TEXTS]
    assert any(TRIGGER.search(t) for t in TEXTS) and not all(TRIGGER.search(t) for t in TEXTS)


@pytest.mark.parametrize("test", [calls_pattern(), _mesh_calls_pattern()], ids=["sites", "meshes"])
def test_named_calls_answer_as_their_regular_expression(test: NamedCalls) -> None:
    expression = _named_calls_expression(test.names)
    assert [test.search(t) for t in TEXTS] == [bool(expression.search(t)) for t in TEXTS]
    assert "zeros" in calls_pattern().names and "zeros" in _interesting_names()


def test_called_names_are_those_of_their_regular_expression() -> None:
    for text in TEXTS:
        assert module_info.called_names(text) == frozenset(CALLED_NAME_EXPRESSION.findall(text)), text


@pytest.mark.parametrize("name", ["P", "mesh", "init", "__init__", "zeros", "a.b"])
def test_mentions_answers_as_a_whole_word_search(name: str) -> None:
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    for text in TEXTS:
        expected = word.search(text) is not None if name.isidentifier() else name in text
        assert mentions(text, name) is expected, text
