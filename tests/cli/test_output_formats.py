"""`--output-format gitlab` and `junit`, and what SARIF says about suppressed findings and rules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from check_helpers import BAD, GOOD, HEADER, TYPO, check, column_of, put, write

from shardls.analysis.rules import ALL_RULES, PROJECT_URL, rule_url

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPOSITORY = Path(__file__).resolve().parents[2]
SUPPRESSED = HEADER + put("y", "(9, 16)", "'data'").rstrip("\n") + "  # shardls: ignore[SH001]\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CI_PROJECT_DIR", raising=False)


# -- gitlab ------------------------------------------------------------------------------------


def test_gitlab_code_quality(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"bad.py": BAD, "good.py": GOOD})
    result = check(capsys, "--output-format", "gitlab")
    assert result.code == 1
    (issue,) = json.loads(result.out)
    column = column_of(BAD, "'data'")
    assert issue["check_name"] == "SH001"
    assert issue["description"].startswith("SH001: dimension 0 of [9, 16] has size 9")
    assert issue["severity"] == "major"
    assert issue["location"] == {
        "path": "bad.py",
        "positions": {"begin": {"line": 6, "column": column}, "end": {"line": 6, "column": column + 6}},
    }
    assert len(issue["fingerprint"]) == 64


def test_gitlab_fingerprints_survive_moved_lines_and_tell_twins_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(Path("."), {"bad.py": BAD + put("y", "(9, 16)", "'data'")})
    first = [issue["fingerprint"] for issue in json.loads(check(capsys, "--output-format", "gitlab").out)]
    assert len(set(first)) == 2  # the same message twice: two findings
    write(Path("."), {"bad.py": "# a comment moves everything down\n" + BAD + put("y", "(9, 16)", "'data'")})
    moved = [issue["fingerprint"] for issue in json.loads(check(capsys, "--output-format", "gitlab").out)]
    assert moved == first


def test_gitlab_paths_are_relative_to_the_gitlab_project(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"sub/bad.py": BAD})
    monkeypatch.chdir(tmp_path / "sub")
    monkeypatch.setenv("CI_PROJECT_DIR", str(tmp_path))
    (issue,) = json.loads(check(capsys, "--output-format", "gitlab").out)
    assert issue["location"]["path"] == "sub/bad.py"


def test_gitlab_clean_is_an_empty_list(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"good.py": GOOD})
    result = check(capsys, "--output-format", "gitlab")
    assert (result.code, json.loads(result.out)) == (0, [])


# -- junit -------------------------------------------------------------------------------------


def test_junit(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"bad.py": BAD, "pkg/typo.py": TYPO, "good.py": GOOD})
    result = check(capsys, "--output-format", "junit")
    assert result.code == 1
    assert result.out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ElementTree.fromstring(result.out.split("\n", 1)[1])
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "2", "2")
    suites = {suite.get("name", ""): suite for suite in root}
    assert sorted(suites) == ["bad.py", "pkg/typo.py"]
    (case,) = suites["pkg/typo.py"]
    assert (case.get("name"), case.get("classname"), case.get("line")) == (
        "org.shardls.SH005",
        "pkg/typo",
        "6",
    )
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "error"
    assert "did you mean 'model'?" in (failure.get("message") or "")
    column = column_of(TYPO, "'modle'")
    assert (failure.text or "").startswith(f"line 6, col {column}, ")


def test_junit_clean_has_one_passing_case(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"good.py": GOOD})
    result = check(capsys, "--output-format", "junit")
    root = ElementTree.fromstring(result.out.split("\n", 1)[1])
    assert (result.code, root.get("tests"), root.get("failures")) == (0, "1", "0")
    assert [case.get("name") for case in root.iter("testcase")] == ["No errors found"]


def test_junit_is_ascii_whatever_the_stream(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"two_axes.py": HEADER + put("w", "(9, 16)", "('data', 'model')")})
    out = check(capsys, "--output-format", "junit").out
    assert out.isascii() and "&#215;" in out  # the × of `2×4`, as a character reference
    failure = next(ElementTree.fromstring(out.split("\n", 1)[1]).iter("failure"))
    assert "of size 2×4" in (failure.get("message") or "")


def test_junit_escapes_what_xml_cannot_hold_raw(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"a&b<c>.py": BAD})
    root = ElementTree.fromstring(check(capsys, "--output-format", "junit").out.split("\n", 1)[1])
    assert [suite.get("name") for suite in root] == ["a&b<c>.py"]


# -- sarif -------------------------------------------------------------------------------------


def test_sarif_keeps_suppressed_findings_as_suppressed(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"quiet.py": SUPPRESSED, "bad.py": BAD})
    result = check(capsys, "--output-format", "sarif")
    assert result.code == 1  # the suppressed one does not fail the check
    results = json.loads(result.out)["runs"][0]["results"]
    by_path = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results}
    assert "suppressions" not in by_path["bad.py"]
    assert by_path["quiet.py"]["ruleId"] == "SH001"
    assert by_path["quiet.py"]["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "# shardls: ignore[SH001]"}
    ]
    # the other formats do not show it
    assert check(capsys, "--output-format", "concise", "quiet.py").out.startswith("All checks passed")
    write(Path("."), {"shardls.toml": "ignore = ['SH001']\n"})
    results = json.loads(check(capsys, "--output-format", "sarif").out)["runs"][0]["results"]
    assert [r for r in results if r["ruleId"] == "SH001"] == []  # not a result: the rule is off


def test_sarif_justification_is_the_comment_where_the_analysis_reads_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    continued = HEADER + (
        "y = jax.device_put(jnp.zeros((9, 16)), NamedSharding(mesh, P('data'))) + \\\n"
        "    0  # shardls: ignore[SH001]\n"
    )
    write(Path("."), {"continued.py": continued})
    (result,) = [
        r
        for r in json.loads(check(capsys, "--output-format", "sarif").out)["runs"][0]["results"]
        if r["ruleId"] == "SH001"
    ]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 6
    assert result["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "# shardls: ignore[SH001]"}
    ]


def test_sarif_help_uris_are_rule_pages_of_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"good.py": GOOD})
    rules = json.loads(check(capsys, "--output-format", "sarif").out)["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["helpUri"] for rule in rules] == [
        f"{PROJECT_URL}/blob/main/docs/rules/{code}.md" for code in ALL_RULES
    ]
    for code in ALL_RULES:  # every link points at a page that exists
        assert (REPOSITORY / "docs" / "rules" / f"{code}.md").is_file(), rule_url(code)


def test_the_project_url_is_the_one_pyproject_publishes() -> None:
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls = project.get("urls")
    if urls is None:
        pytest.skip("pyproject.toml has no [project.urls] yet")
    assert PROJECT_URL in {url.rstrip("/") for url in urls.values()}
