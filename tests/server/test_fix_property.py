"""Every quick fix is right: applied to its file, the text still parses, the diagnostic it targets
is gone, and nothing else changes.

Over every diagnostic with a fix in examples/, tests/corpus/ and generated edge cases (string
prefixes, f-strings, implicit concatenation, continuations, `#` inside strings, CRLF, tabs,
non-ASCII before the edit, comments already on the line), each fix the editor would offer is
applied with `apply_edits` and the result analysed again. The other diagnostics are compared by
code, line (shifted by the lines the fix inserts or removes) and message. A certain fix and a
suppression must leave them exactly as they were; a fix that is a guess (another axis, another
mesh context) may make others go away, never add one. No fix may write a name nothing binds (a
rename that wrote `P(rmodelr)` for `P(r"modle")` parses and silences SH005), and no site may
lose its spec.
"""

from __future__ import annotations

import ast
import random
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import Diagnostic, FileAnalysis, Span
from shardls.analysis.workspace import Workspace
from shardls.fixes import Edit, Fix, FixSource, apply_edits, fixes_for

ROOT = Path(__file__).resolve().parents[2]
SEED = 15
CASES = 160
"""Generated edge cases (a bound on the work, not a timing)."""

HEADER = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "\n"
    'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
)

_LITERALS = [
    '"modle"',
    "'modle'",
    'r"modle"',
    "R'modle'",
    'u"modle"',
    'f"modle"',
    '"mo" "dle"',
    '"""modle"""',
    '"mod\\x6ce"',
    'rb"modle"',
]
_STATEMENTS = [
    "a = NamedSharding(mesh, P({lit}))",
    "a = NamedSharding(mesh, \\\n    P({lit}))",
    "a = NamedSharding(\n    mesh,\n    P(None, {lit}),\n)",
    'a = NamedSharding(mesh, P({lit})); s = """\ntext # not a comment\n"""',
    'a = NamedSharding(mesh, P({lit})); s = """\n\n\ttext\n\n"""',
    'b = "#"; a = NamedSharding(mesh, P({lit}))',
    "é = 'ü'; a = NamedSharding(mesh, P({lit}))",
    "if True:\n\ta = NamedSharding(mesh, P({lit}))",
    "w = jax.device_put(jnp.zeros((50257, 16)), NamedSharding(mesh, P({axis})))",
    "w = jax.device_put(jnp.zeros((50257, 16)), NamedSharding(mesh, \\\n    P({axis})))",
    "s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P(None)))",
    "s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, jax.sharding.PartitionSpec(None,)))",
    "b = NamedSharding(mesh, P('model'))  # shardls: ignore[SH005]",
    "b = NamedSharding(mesh, P('model'))  # noqa: SH005, F401",
    "b = NamedSharding(mesh, P('model'))  # note  # shardls: ignore[SH005, SH001] # tail",
    "b = 1  # shardls: ignore",
    "# shardls: ignore[SH003]",
]
_COMMENTS = ["", "  # note", "  # a # b", "  # shardls: ignore[SH001]", "  # noqa: E501", '  # "q # q"']
_AXES = ['"model"', "'model'", 'r"model"', '("data", "model")', '"data", "model"']

_MESH_CONTEXT = [
    "with mesh:\n    y = jax.lax.with_sharding_constraint(jnp.zeros((8, 8)), P('data'))",
    "def f(x):\n    with mesh:\n        return jax.lax.with_sharding_constraint(x, P('data'))\n\n\nf(jnp.zeros((8, 8)))",
    "with mesh as m:\n    y = jax.lax.with_sharding_constraint(jnp.zeros((8, 8)), P('data'))",
]
_TOPS = [
    "",
    '"""The module."""\n',
    '"""The module.\n\nimport jax\n"""\n',
    "# -*- coding: utf-8 -*-\n# Copyright\n\n",
    '"""Doc."""\nfrom __future__ import annotations\n',
    "#!/usr/bin/env python\n'''Doc.'''\n\nfrom __future__ import annotations\n\n",
]
_MESH_ONLY = (
    "import jax.numpy as jnp\n"
    "from jax import make_mesh\n"
    "from jax.lax import with_sharding_constraint as wsc\n"
    "from jax.sharding import PartitionSpec as P\n"
    'mesh = make_mesh((2, 4), ("data", "model"))\n'
)
"""A file that does not bind `jax` (`import jax.numpy as jnp` binds `jnp` only)."""
_MESH_ONLY_CONTEXT = [
    "with mesh:\n    y = wsc(jnp.zeros((8, 8)), P('data'))",
    "def f(x):\n    with mesh:\n        return wsc(x, P('data'))\n\n\nf(jnp.zeros((8, 8)))",
]
_PARAMS = [
    "with jax.set_mesh(mesh):\n    scale = nnx.Param(jnp.ones((8, 16)), sharding=('data', None))",
    "with jax.set_mesh(mesh):\n    scale = nnx.Param(\n        jnp.ones((8, 16)),\n        sharding_names=('data', None),  # old\n    )",
    "with jax.set_mesh(mesh):\n    scale = nnx.Param(jnp.ones((8, 16)), sharding=('data', None), out_sharding=('data', None))",
]


def _generated(rng: random.Random) -> Iterator[tuple[str, str]]:
    for number in range(CASES):
        kind = number % 4
        if kind == 0:
            statement = rng.choice(_STATEMENTS).format(lit=rng.choice(_LITERALS), axis=rng.choice(_AXES))
            text = HEADER + statement + rng.choice(_COMMENTS) + "\n"
        elif kind == 1:
            text = rng.choice(_TOPS) + HEADER + rng.choice(_MESH_CONTEXT) + "\n"
        elif kind == 2:
            top = rng.choice(_TOPS)
            text = top + _MESH_ONLY + rng.choice(_MESH_ONLY_CONTEXT) + rng.choice(_COMMENTS) + "\n"
        else:
            text = HEADER + "from flax import nnx\n" + rng.choice(_PARAMS) + "\n"
        if rng.random() < 0.3:
            text = text.replace("\n", "\r\n")
        if rng.random() < 0.2:
            text = text.rstrip("\r\n")
        yield f"generated_{number}.py", text


def _sources() -> list[tuple[str, Path, str]]:
    found = []
    for folder in (ROOT / "examples", ROOT / "tests" / "corpus"):
        for path in sorted(folder.rglob("*.py")):
            found.append((str(path.relative_to(ROOT)), path, path.read_text(encoding="utf-8")))
    for name, text in _generated(random.Random(SEED)):
        found.append((name, ROOT / "tests" / "corpus" / name, text))
    return found


SOURCES = _sources()
_ANALYZER = Analyzer(Workspace([ROOT / "tests" / "corpus", ROOT / "examples"]))


def _analyze(path: Path, text: str) -> FileAnalysis:
    return _ANALYZER.analyze(str(path), text)


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError:
        return False
    return True


def _names(text: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Name)}


def _imported(text: str) -> set[str]:
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def _shift(edits: tuple[Edit, ...]) -> list[tuple[tuple[int, int], int]]:
    """(position, lines added) of each edit: what starts at or after the position moves."""
    return [
        ((e.span.end_line, e.span.end_column), e.text.count("\n") - (e.span.end_line - e.span.line))
        for e in edits
    ]


def _moved(span: Span, shifts: list[tuple[tuple[int, int], int]]) -> int:
    return span.line + sum(delta for at, delta in shifts if (span.line, span.column) >= at)


def _key(diagnostic: Diagnostic, line: int) -> tuple[str, int, str]:
    return diagnostic.code, line, diagnostic.message


def _fixes() -> Iterator[tuple[str, Path, str, Diagnostic, Fix]]:
    for name, path, text in SOURCES:
        analysis = _analyze(path, text)
        source = FixSource(text)
        for diagnostic in analysis.diagnostics:
            sites = [s for s in analysis.sites_on(diagnostic.span.line) if s.spec is not None]
            for fix in fixes_for(diagnostic, source, sites[0] if sites else None):
                yield name, path, text, diagnostic, fix


FIXES = list(_fixes())


def test_the_fixes_cover_every_kind() -> None:
    """The property below is only as strong as what it sees: every fix builder is exercised."""
    titles = Counter(fix.title.split(" ", 1)[0] for *_, fix in FIXES)
    codes = {diagnostic.code for *_, diagnostic, fix in FIXES if not fix.silences}
    assert {"SH001", "SH003", "SH005", "SH203", "SH204", "SH401"} <= codes
    assert titles["Ignore"] >= 100


@pytest.mark.parametrize(
    ("name", "path", "text", "diagnostic", "fix"),
    FIXES,
    ids=[f"{name}:{d.span.line + 1}:{d.code}:{fix.title[:40]}" for name, _, _, d, fix in FIXES],
)
def test_a_fix_parses_removes_its_diagnostic_and_changes_nothing_else(
    name: str, path: Path, text: str, diagnostic: Diagnostic, fix: Fix
) -> None:
    before = _analyze(path, text)
    fixed = apply_edits(text, fix.edits)
    if _parses(text):
        assert _parses(fixed), f"{fix.title} broke the syntax:\n{fixed}"
    after = _analyze(path, fixed)
    shifts = _shift(fix.edits)
    target = _key(diagnostic, _moved(diagnostic.span, shifts))
    found = Counter(_key(d, d.span.line) for d in after.diagnostics)
    assert found[target] == 0, f"{fix.title} left {target}:\n{fixed}"
    line = target[1]
    silenced = {id(d) for d in before.diagnostics if fix.silences and d.code == diagnostic.code}
    others = Counter(
        _key(d, _moved(d.span, shifts))
        for d in before.diagnostics
        if d != diagnostic and not (id(d) in silenced and _moved(d.span, shifts) == line)
    )
    del found[target]
    if fix.certain or fix.silences:
        assert found == others, f"{fix.title} changed other diagnostics:\n{fixed}"
    else:
        assert not (found - others), f"{fix.title} added diagnostics:\n{fixed}"
    if _parses(text):
        new_names = _names(fixed) - _names(text)
        assert new_names <= _imported(fixed), f"{fix.title} wrote the names {new_names}:\n{fixed}"
    known = Counter((s.kind, _moved(s.span, shifts)) for s in before.sites if s.spec is not None)
    still = Counter((s.kind, s.span.line) for s in after.sites if s.spec is not None)
    assert not (known - still), f"{fix.title} lost the spec of a site:\n{fixed}"


@pytest.mark.parametrize("literal", ['f"modle"', '"mo" "dle"', 'b"modle"', '"mod\\x6ce"', 'rb"modle"'])
def test_no_rename_when_the_literal_is_not_plain(literal: str) -> None:
    text = HEADER + f"a = NamedSharding(mesh, P({literal}))\n"
    analysis = _analyze(ROOT / "tests" / "corpus" / "literal.py", text)
    source = FixSource(text)
    titles = [f.title for d in analysis.diagnostics for f in fixes_for(d, source) if not f.silences]
    assert not any(title.startswith("Replace") for title in titles), titles


def test_rename_keeps_the_prefix_and_quotes() -> None:
    text = HEADER + "a = NamedSharding(mesh, P(r'modle'))\n"
    analysis = _analyze(ROOT / "tests" / "corpus" / "raw.py", text)
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "SH005"]
    (rename, _) = fixes_for(diagnostic, FixSource(text))
    assert "P(r'model')" in apply_edits(text, rename.edits)


def test_the_import_goes_after_the_docstring_and_future_imports() -> None:
    text = (
        '"""Docs.\n\nimport jax\n"""\nfrom __future__ import annotations\n\n'
        + _MESH_ONLY
        + _MESH_ONLY_CONTEXT[0]
        + "\n"
    )
    analysis = _analyze(ROOT / "tests" / "corpus" / "docstring.py", text)
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "SH203"]
    fixed = apply_edits(text, fixes_for(diagnostic, FixSource(text))[0].edits)
    assert fixed.startswith('"""Docs.\n\nimport jax\n"""\nfrom __future__ import annotations\n\nimport jax\n')
    assert "with jax.set_mesh(mesh):" in fixed


def test_ignore_goes_on_the_last_line_of_a_continuation_and_joins_a_pragma() -> None:
    text = HEADER + "a = NamedSharding(mesh, \\\n    P('modle'))  # shardls: ignore[SH001]\n"
    analysis = _analyze(ROOT / "tests" / "corpus" / "continued.py", text)
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "SH005"]
    ignore = fixes_for(diagnostic, FixSource(text))[-1]
    fixed = apply_edits(text, ignore.edits)
    assert fixed.endswith("P('modle'))  # shardls: ignore[SH001, SH005]\n")
    after = _analyze(ROOT / "tests" / "corpus" / "continued.py", fixed).diagnostics
    assert [(d.code, d.data["remove"]) for d in after] == [("SH401", ["SH001"])]
