"""The rule pages in docs/rules/ stay true: one page per rule code, an index that matches the
catalogue, and bad/good examples that behave under real JAX the way the page says.

Every ```python block on a rule page is marked in its info string:

    ```python bad raises=ValueError match="implies that array axis 0"
    ```python bad warns=DeprecationWarning match="'sharding' is deprecated"
    ```python bad runs          # JAX accepts it silently; the asserts in the block show the harm
    ```python good              # must run without an exception or a warning
    ```python bad no-run        # about the text itself (syntax, encoding): never executed

`raises=`/`warns=` name a class anywhere in the exception's (or warning's) MRO, and `match=` is a
substring of its message. The runnable blocks all go to one subprocess (docs_example_worker.py)
with 8 fake CPU devices, since XLA_FLAGS must be set before jax is imported.

shardls itself must agree with each page: it reports the page's code on every bad example and
no error or warning on a good one (with the default settings: 8 devices).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.rules import ALL_RULES
from shardls.analysis.settings import Settings
from shardls.core import Severity
from shardls.memory.diagnostics import memory_diagnostics

ROOT = Path(__file__).resolve().parents[2]
RULES_DIR = ROOT / "docs" / "rules"
WORKER = Path(__file__).with_name("docs_example_worker.py")
DEVICES = 8

_FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<code>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_ROLES = ("bad", "good")
_NOT_TEXT = {"SH210"}
PAGE_SETTINGS = {"SH213": Settings(hbm_per_device=16 * 2**30)}
"""Rules that only apply under a setting the page states."""
"""Pages whose bad example cannot be written as text (bytes that are not UTF-8)."""


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    role: str
    code: str
    runs: bool
    raises: str | None = None
    warns: str | None = None
    match: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page}.md:{self.line}"


def _pages() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted(RULES_DIR.glob("SH*.md"))}


def _examples(page: str, text: str) -> list[Example]:
    found = []
    for match in _FENCE.finditer(text):
        words = shlex.split(match.group("info"))
        if not words or words[0] != "python":
            continue
        line = text.count("\n", 0, match.start()) + 1
        flags = {w for w in words[1:] if "=" not in w}
        options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        roles = [r for r in _ROLES if r in flags]
        unknown = flags - {*_ROLES, "runs", "no-run"} or set(options) - {"raises", "warns", "match"}
        assert not unknown, f"{page}.md:{line}: unknown marks {sorted(unknown)} in ```{match.group('info')}"
        assert len(roles) == 1, f"{page}.md:{line}: mark the block `python bad` or `python good`"
        runs = "no-run" not in flags
        example = Example(
            page,
            line,
            roles[0],
            match.group("code"),
            runs,
            options.get("raises"),
            options.get("warns"),
            options.get("match"),
        )
        if runs and example.role == "bad":
            outcomes = [example.raises is not None, example.warns is not None, "runs" in flags]
            assert sum(outcomes) == 1, f"{example.id}: a bad block says raises=, warns= or runs"
        if example.role == "good":
            assert not (example.raises or example.warns), f"{example.id}: a good block must just run"
        found.append(example)
    return found


PAGES = _pages()
EXAMPLES = [example for code, text in PAGES.items() for example in _examples(code, text)]
RUNNABLE = [example for example in EXAMPLES if example.runs]


@pytest.fixture(scope="module")
def jax_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("docs") / "results.json"
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={DEVICES}".strip()
    env["JAX_PLATFORMS"] = "cpu"
    blocks = [{"id": example.id, "code": example.code} for example in RUNNABLE]
    # XLA logs to stderr (e.g. rematerialization notes); keep it for a failure message only.
    done = subprocess.run(
        [sys.executable, str(WORKER), str(out)],
        input=json.dumps(blocks),
        text=True,
        env=env,
        stderr=subprocess.PIPE,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    return {result["id"]: result for result in json.loads(out.read_text(encoding="utf-8"))}


def test_every_rule_has_a_page() -> None:
    assert sorted(PAGES) == sorted(ALL_RULES)


@pytest.mark.parametrize("code", sorted(PAGES))
def test_every_python_fence_is_read(code: str) -> None:
    """A fence the parser skips (a backtick in the info string is not allowed) would go unchecked."""
    opened = len(re.findall(r"^```python", PAGES[code], re.MULTILINE))
    assert opened == sum(1 for example in EXAMPLES if example.page == code)


@pytest.mark.parametrize("code", sorted(ALL_RULES))
def test_page_states_the_rule(code: str) -> None:
    rule = ALL_RULES[code]
    text = PAGES[code]
    assert text.splitlines()[0] == f"# {code}: {rule.name}"
    assert f"**Default severity:** {rule.severity.value}" in text
    assert f"# shardls: ignore[{code}]" in text
    roles = [example.role for example in EXAMPLES if example.page == code]
    assert "bad" in roles and "good" in roles, f"{code}.md needs a bad and a good example"


def test_index_matches_the_catalogue() -> None:
    index = (RULES_DIR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(SH\d{3})\]\((SH\d{3})\.md\) \| `([^`]+)` \| (\w+) \| (.+?) \|$", index, re.M)
    assert [row[0] for row in rows] == sorted(ALL_RULES)
    for code, link, name, severity, summary in rows:
        rule = ALL_RULES[code]
        assert (link, name, severity, summary) == (code, rule.name, rule.severity.value, rule.summary)


@pytest.mark.parametrize("example", RUNNABLE, ids=lambda example: example.id)
def test_example_behaves_as_the_page_says(example: Example, jax_results: dict[str, dict[str, Any]]) -> None:
    result = jax_results[example.id]
    raised, message, caught = result["raised"], result["message"], result["warnings"]
    if example.role == "good" or example.warns or not example.raises:
        assert raised is None, f"{example.id} raised {raised[0]}: {message}"
    if example.role == "good":
        assert not caught, f"{example.id} warned: {caught}"
    if example.raises:
        assert raised is not None, f"{example.id} was expected to raise {example.raises} but ran"
        assert example.raises in raised, f"{example.id} raised {raised[0]}, not {example.raises}: {message}"
        assert example.match is None or example.match in message, f"{example.id}: {message!r}"
    if example.warns:
        assert any(
            example.warns in names and (example.match is None or example.match in text)
            for names, text in caught
        ), f"{example.id} did not warn {example.warns} {example.match!r}: {caught}"


@pytest.mark.parametrize(
    "example", [e for e in EXAMPLES if e.page not in _NOT_TEXT], ids=lambda example: example.id
)
def test_shardls_agrees_with_the_page(example: Example) -> None:
    settings = PAGE_SETTINGS.get(example.page, Settings())
    analyzer = Analyzer(producers=(memory_diagnostics,))
    analysis = analyzer.analyze(f"/docs/{example.page}_{example.line}.py", example.code, settings)
    found = [f"{d.span.line + 1}: {d.code} {d.message}" for d in analysis.diagnostics]
    if example.role == "bad":
        assert any(d.code == example.page for d in analysis.diagnostics), found
    else:
        serious = [d for d in analysis.diagnostics if d.severity is not Severity.INFO]
        assert not serious, found
