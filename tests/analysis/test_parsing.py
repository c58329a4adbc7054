"""Parsing that survives editing: a broken statement costs only itself."""

from __future__ import annotations

import sys
import textwrap

from analysis_helpers import analyze

from shardls.analysis.source import SegmentParser

GOOD = """
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
early = jax.device_put(jnp.zeros((50257, 16)), NamedSharding(mesh, P("model")))


def helper(d_model=512):
    scale = 2
    y = jnp.ones((d_model, 6))
    return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(None, "model")))


class Config:
    width = 12


late = jax.device_put(jnp.zeros((8, 12)), NamedSharding(mesh, P("data", "modle")))
"""


def _facts(source: str) -> tuple[set[tuple[str | None, int, object]], set[tuple[str, int]]]:
    analysis = analyze(source)
    sites = {(s.name, s.span.line, s.shard_shape) for s in analysis.sites}
    diagnostics = {(d.code, d.span.line) for d in analysis.diagnostics if d.code != "SH209"}
    return sites, diagnostics


def _break(source: str, marker: str, replacement: str) -> str:
    lines = textwrap.dedent(source).split("\n")
    index = next(i for i, line in enumerate(lines) if marker in line)
    lines[index] = replacement
    return "\n".join(lines)


def test_a_syntax_error_in_the_middle_keeps_everything_else() -> None:
    good_sites, good_diagnostics = _facts(GOOD)
    assert {code for code, _ in good_diagnostics} == {"SH001", "SH005", "SH007"}
    broken = _break(GOOD, "width = 12", "    width = (12 +")
    sites, diagnostics = _facts(broken)
    assert sites == good_sites
    assert diagnostics == good_diagnostics
    assert "SH209" in {d.code for d in analyze(broken).diagnostics}


def test_a_half_typed_line_inside_a_function_keeps_the_rest_of_the_function() -> None:
    broken = _break(GOOD, "scale = 2", "    scale = foo(")
    sites, diagnostics = _facts(broken)
    good_sites, good_diagnostics = _facts(GOOD)
    assert sites == good_sites
    assert diagnostics == good_diagnostics


def test_column_zero_text_inside_a_string_does_not_split_the_statement() -> None:
    source = 'x = """\nnot code at column 0\n"""\ny = 1\n'
    parsed = SegmentParser().parse(source)
    assert [type(stmt).__name__ for seg in parsed.segments for stmt in seg.body] == ["Assign", "Assign"]
    assert parsed.errors == []


def test_a_long_module_docstring_is_one_statement() -> None:
    """Found on google/tunix: a docstring with more column-0 lines than re-joining allows (12)
    was read as a run of broken statements, each an SH209."""
    body = "".join(f"line {i}: `2x2x4`, 4i x 4j, it's\n" for i in range(40))
    parsed = SegmentParser().parse('"""Title.\n' + body + '"""\nimport jax\n')
    assert parsed.errors == []
    assert [type(stmt).__name__ for seg in parsed.segments for stmt in seg.body] == ["Expr", "Import"]


def test_quotes_in_comments_and_hashes_in_strings_are_read_as_python_reads_them() -> None:
    text = "# don't\nx = '#'  # \"\"\"\ny = '''\nz = 1\n''' + \"'''\"\nw = 2\n"
    parsed = SegmentParser().parse(text)
    assert parsed.errors == []
    assert [type(stmt).__name__ for seg in parsed.segments for stmt in seg.body] == ["Assign"] * 3


def test_an_unclosed_docstring_being_typed_does_not_swallow_the_file() -> None:
    source = textwrap.dedent(GOOD).replace("class Config:", '"""Started typing\nclass Config:', 1)
    sites, _ = _facts(source)
    good_sites, _ = _facts(GOOD)
    assert {(name, shape) for name, _, shape in sites} == {(name, shape) for name, _, shape in good_sites}


def test_segments_are_reused_after_an_edit_elsewhere() -> None:
    parser = SegmentParser()
    first = parser.parse("a = 1\n\nb = 2\n\nc = 3\n")
    second = parser.parse("a = 1\n\nb = 20\n\nc = 3\n")
    assert first.segments[0].body[0] is second.segments[0].body[0]
    assert first.segments[-1].body[0] is second.segments[-1].body[0]
    assert first.segments[1].body[0] is not second.segments[1].body[0]


def test_hostile_text_parses_to_errors_not_exceptions() -> None:
    for text in ("\ufeffimport jax\r\nx = 1\r", "(" * 5000, "def f(:\n", "\x00\x01garbage", ""):
        parsed = SegmentParser().parse(text)
        assert isinstance(parsed.errors, list)


def test_newer_f_string_syntax_says_which_python_reads_it() -> None:
    """Found on google/tunix: PEP 701 f-strings are valid Python 3.12; the parser is the running
    Python's, and the warning says so rather than calling the user's code broken."""
    parsed = SegmentParser().parse(r"""x = f"{'\n'.join(names)}"
""")
    errors = [message for _, message in parsed.errors]
    if sys.version_info >= (3, 12):
        assert errors == []
    else:
        python = f"3.{sys.version_info.minor}"
        assert errors == [
            "syntax error: f-string expression part cannot include a backslash "
            f"(valid from Python 3.12; shardls runs on Python {python})"
        ]


def test_the_same_statement_twice_gets_two_parses() -> None:
    """The parse cache is keyed by text; facts are kept by node, so two identical statements in
    a file (`jax.set_mesh(mesh)` once per section of a tutorial) must not share their nodes."""
    parser = SegmentParser()
    source = parser.parse("mesh = a\njax.set_mesh(mesh)\nmesh = b\njax.set_mesh(mesh)\n")
    first, second = source.segments[1].body[0], source.segments[3].body[0]
    assert first is not second
    again = parser.parse("jax.set_mesh(mesh)\n")  # a later parse still reuses the cache
    assert again.segments[0].body[0] in (first, second)
