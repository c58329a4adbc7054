"""Suppression comments as ruff reads them: `# noqa: SH001`, pragmas after other comments,
continuation lines, unused suppressions (SH401) and pragmas shardls cannot read (SH402)."""

from __future__ import annotations

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.settings import Settings
from shardls.core import Severity

HEADER = (
    "import jax\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
)
TYPO = 'a = NamedSharding(mesh, P("modle"))'


def _analyze(body: str, settings: Settings | None = None) -> FileAnalysis:
    return Analyzer().analyze("/pragmas/case.py", HEADER + body, settings or Settings())


def _codes(body: str, settings: Settings | None = None) -> list[str]:
    return [d.code for d in _analyze(body, settings).diagnostics]


@pytest.mark.parametrize(
    "comment",
    [
        "# shardls: ignore[SH005]",
        "# note  # shardls: ignore[SH005]",
        "# shardls: ignore[SH005]  # because the axis comes later",
        "# shardls: ignore[SH001 SH005]",
        "# shardls:ignore[SH005]",
        "# shardls: ignore",
        "# noqa: SH005",
        "# NOQA: SH005",
        "# NoQA:SH005",
        "# noqa: F401, SH005",
        "# noqa: F401 SH005",
        "# noqa:F401,SH005 the axis is renamed later",
        "# a note # noqa: SH005",
    ],
)
def test_a_suppression_is_honoured(comment: str) -> None:
    assert "SH005" not in _codes(f"{TYPO}  {comment}\n")


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa",  # bare: only with bare-noqa
        "# noqa: sh005",  # ruff's codes are upper case
        "# noqa SH005",  # no colon: a bare noqa with a note
        "# noqaSH005",  # ruff refuses it
        "# shardls: ignore[SH001]",
        "# shardls ignore[SH005]",
        '# "# shardls: ignore[SH005]"',
    ],
)
def test_a_comment_that_does_not_suppress(comment: str) -> None:
    assert "SH005" in _codes(f"{TYPO}  {comment}\n")


def test_a_bare_noqa_only_with_the_setting() -> None:
    assert "SH005" in _codes(f"{TYPO}  # noqa\n")
    assert "SH005" not in _codes(f"{TYPO}  # noqa\n", Settings(bare_noqa=True))
    assert "SH005" not in _codes(f"{TYPO}  # noqa because\n", Settings(bare_noqa=True))


def test_a_pragma_inside_a_string_is_not_a_comment() -> None:
    body = f'{TYPO}; s = "  # shardls: ignore[SH005]"\nt = """\n# shardls: ignore-file\n"""\n'
    assert "SH005" in _codes(body)


def test_the_last_line_of_a_continuation_covers_it() -> None:
    body = 'a = NamedSharding(mesh, \\\n    P("modle"))  # shardls: ignore[SH005]\n'
    assert _codes(body) == []
    in_string = 'a, s = NamedSharding(mesh, P("modle")), """\nnot a comment\n"""  # shardls: ignore[SH005]\n'
    assert _codes(in_string) == []


def test_a_bracketed_line_has_its_own_comment() -> None:
    body = 'a = NamedSharding(\n    mesh,\n    P("modle"),\n)  # shardls: ignore[SH005]\n'
    assert _codes(body) == ["SH005", "SH401"]


def test_suppressed_diagnostics_are_kept_for_sarif() -> None:
    analysis = _analyze(f"{TYPO}  # noqa: SH005\n")
    assert [d.code for d in analysis.suppressed] == ["SH005"]


def _unused(body: str, settings: Settings | None = None) -> list[str]:
    return [d.message for d in _analyze(body, settings).diagnostics if d.code == "SH401"]


def test_unused_suppressions_are_reported_by_kind() -> None:
    (message,) = _unused(
        f"{TYPO}  # shardls: ignore[SH005, SH001, SH999, SH005, SH107]\n",
        Settings(ignore=frozenset({"SH107"})),
    )
    assert message.startswith(
        "unused suppression (unused: SH001; non-enabled: SH107; unknown: SH999; duplicated: SH005)"
    )
    assert "default device count (8)" in message
    assert _unused("b = 1  # shardls: ignore[SH001]\n", Settings(device_count=8)) == [
        "unused suppression (unused: SH001)"
    ]


def test_an_unused_blanket_suppression() -> None:
    assert _unused("b = 1  # shardls: ignore\n", Settings(device_count=8)) == [
        "unused blanket suppression: shardls reports nothing on this line"
    ]


def test_other_tools_codes_and_bare_noqa_are_never_reported() -> None:
    assert _unused("b = 1  # noqa: F401, E501\n") == []
    assert _unused("b = 1  # noqa\n") == []
    (message,) = _unused("b = 1  # noqa: F401, SH001\n", Settings(device_count=8))
    assert message == "unused `# noqa` (unused: SH001)"


def test_sh401_is_silenced_only_by_naming_it() -> None:
    assert _unused("b = 1  # shardls: ignore[SH001, SH401]\n") == []
    assert _unused("b = 1  # shardls: ignore[SH001]  # shardls: ignore[SH401]\n") == []


def test_no_unused_report_where_the_analysis_is_incomplete() -> None:
    assert _unused("def f(:  # shardls: ignore[SH001]\n    pass\n") == []


@pytest.mark.parametrize(
    ("comment", "says"),
    [
        ("# shardls: ignore[SH01]", "SH01 is a prefix, and `ignore[...]` takes full codes (SH010, SH011"),
        ("# shardls: ignore[sh005]", "rule codes are upper case: write SH005, not sh005"),
        ("# shardls: ignore[]", "names no code"),
        ("# shardls: ignore[SH005] later", "cannot read the pragma"),
        ("# shardls: ignore[unused-import]", "'unused-import' is not a rule code"),
        ("# shardls: ignroe[SH005]", "unknown shardls pragma"),
        ("# shardls: device-count=eight", "device-count needs a positive integer"),
        ("# shardls: ignore-file", "must be on a line of its own"),
    ],
)
def test_an_unreadable_pragma_is_sh402(comment: str, says: str) -> None:
    analysis = _analyze(f"{TYPO}  {comment}\n")
    (invalid,) = [d for d in analysis.diagnostics if d.code == "SH402"]
    assert says in invalid.message
    assert invalid.severity is Severity.ERROR
    assert "SH005" in [d.code for d in analysis.diagnostics]  # an unreadable pragma silences nothing
    assert "SH209" not in [d.code for d in analysis.diagnostics]


def test_ignore_file_on_its_own_line_skips_the_file() -> None:
    assert _codes(f"# a note # shardls: ignore-file\n{TYPO}\n") == []


def test_comments_kept_by_text_are_placed_where_the_statement_now_is() -> None:
    """A statement's comments are kept by its text and placed at its current line: the same
    suppressed statement at another line (lines added above it, or the same text twice), and a
    multi-line string the suppression covers, read as a fresh reading of each text reads them."""
    from shardls.analysis.pragmas import read_pragmas
    from shardls.analysis.source import SegmentParser

    statement = 'b = NamedSharding(mesh, P("modle",\n  """x\n  """))  # shardls: ignore[SH005]\n'
    texts = [
        HEADER + statement,
        HEADER + "\n\n" + statement,
        HEADER + statement + "\n" + statement,
        HEADER + "x = 1  # noqa: SH005\n" + statement,
    ]
    kept = SegmentParser()
    for text in texts:
        found = read_pragmas(kept.parse(text))
        fresh = read_pragmas(SegmentParser().parse(text))
        assert found == fresh
        assert [s.line for s in found.suppressions] == [s.line for s in fresh.suppressions]
        assert found.comment_lines
