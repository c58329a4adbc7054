"""Hostile or absurd inputs: each gives a result or a clear diagnostic, within the work and
memory bounds of docs/security.md, and never takes the analysis of the rest of the file down.
The time each takes is a benchmark (benchmarks/bench_robustness.py), not a test: CI is busy.

Every program below ends with OK_SITE, a site whose per-device shape must still be (4, 16).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from robust_helpers import (
    HANG,
    HEAD,
    MEMORY_BOUND,
    OK_SITE,
    StepMeter,
    analyze_within,
    deadline,
    ok_site,
    peak_allocation,
)

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluator import Evaluator, Frame, Limits
from shardls.analysis.library import Environment, Library
from shardls.analysis.values import Const, Unknown
from shardls.analysis.workspace import MAX_FILE_CHARS, MAX_FILE_LINES, Workspace
from shardls.cli.main import main
from shardls.core import parse_dtype
from shardls.files import source_lines


def put(name: str, shape: str, spec: str = "P('data')") -> str:
    return f"{name} = jax.device_put(jnp.zeros({shape}), NamedSharding(mesh, {spec}))\n"


EXPRESSIONS = {
    "power tower": "n = 2**10**10\n" + put("bad", "(n,)"),
    "power tower floor-divided": "n = 10**10**10 // 3\n" + put("bad", "(n,)"),
    "huge shift": "n = 1 << 10**10\n" + put("bad", "(n,)"),
    "negative power tower": "n = 10**-10**10\n" + put("bad", "(n,)"),
    "string of a terabyte": "s = 'a' * 10**12\n" + put("bad", "(len(s),)", "P(s)"),
    "a million spec entries": put("bad", "(8,)", "P(*['x'] * 10**6)"),
    "range of 10**12 in a comprehension": "axes = [i for i in range(10**12)]\n"
    + put("bad", "tuple(axes)", "P(*axes)"),
    "tuple of range(10**12)": "shape = tuple(range(10**12))\n" + put("bad", "shape"),
    "10**4 × 10**4 comprehension": "pairs = [(i, j) for i in range(10**4) for j in range(10**4)]\n"
    + put("bad", "(len(pairs),)"),
    "nested repetition": "a = ((1,) * 9999,) * 9999\nb = a + a\n" + put("bad", "(len(b),)"),
    "string doubling": "s = 'x' * 99999\n" + "s = s + s\n" * 40 + put("bad", "(len(s),)", "P(s)"),
    "f-string growth": "s = 'x' * 99999\nt = f'{s}{s}{s}{s}'\n" + put("bad", "(len(t),)", "P(t)"),
    "choice explosion": "".join(f"x{i} = 1 if flag else 2\n" for i in range(40))
    + "n = "
    + " + ".join(f"x{i}" for i in range(40))
    + "\n"
    + put("bad", "(n,) * 16", "P(*(('data' if flag else 'model'),) * 16)"),
    "5,000 chained names": "a0 = 1\n"
    + "".join(f"a{i} = a{i - 1} + 1\n" for i in range(1, 5000))
    + put("bad", "(a4999,)"),
    "exponential recursion": "def f(n):\n    return f(n) + f(n - 1) + f(n) + f(n - 1)\n"
    + put("bad", "(f(3),)"),
    "mutual recursion": "def f(n):\n    return g(n) * g(n)\ndef g(n):\n    return f(n) + f(n)\n"
    + put("bad", "(f(3), g(2))"),
}


@pytest.mark.parametrize("body", EXPRESSIONS.values(), ids=EXPRESSIONS.keys())
def test_huge_values_end_as_unknown_within_the_bounds(body: str) -> None:
    text = HEAD + body + OK_SITE

    analysis = analyze_within(text)
    peak = peak_allocation(lambda: Analyzer().analyze("/virtual/model.py", text))

    ok_site(analysis)
    assert peak < MEMORY_BOUND, f"peak allocation {peak / 2**20:.1f} MiB"
    bad = [site for site in analysis.sites if site.name == "bad"]
    # A huge value is never turned into a concrete shape: the site is unknown or absent.
    assert all(site.shard_shape is None or len(site.shard_shape) <= 16 for site in bad)


DEEP = {
    "parentheses": lambda n: "(" * n + "1" + ")" * n,
    "additions": lambda n: "1" + " + 1" * n,
    "unary minus": lambda n: "-" * n + "1",
    "not": lambda n: "not " * n + "1",
    "attributes": lambda n: "mesh" + ".shape" * n,
    "subscripts": lambda n: "mesh" + "[0]" * n,
    "calls": lambda n: "P" + "()" * n,
    "nested calls": lambda n: "P(" * n + ")" * n,
    "lists": lambda n: "[" * n + "]" * n,
    "lambdas": lambda n: "lambda: " * n + "1",
    "conditionals": lambda n: "1 if mesh else " * n + "2",
    "comparisons": lambda n: "1" + " < 1" * n,
    "f-strings": lambda n: "f'{" * n + "1" + "}'" * n,
}


@pytest.mark.parametrize("depth", [150, 900, 5000])
@pytest.mark.parametrize("form", DEEP.values(), ids=DEEP.keys())
def test_deep_nesting_never_raises_recursion_error(form: object, depth: int) -> None:
    assert callable(form)
    expression = form(depth)
    text = HEAD + f"x = {expression}\n" + put("bad", "(x,)", f"P({expression})") + OK_SITE

    analysis = analyze_within(text)

    ok_site(analysis)


def _frame(evaluator_workspace: Workspace) -> Frame:
    module = evaluator_workspace.module("/virtual/model.py", "x = 1\n")
    return Frame(module, module.scope, module.source.segments[0], None)


def _evaluator(workspace: Workspace, limits: Limits | None = None) -> Evaluator:
    environment = Environment(Const(8), parse_dtype("float32", x64=False), False)
    return Evaluator(workspace, Library(environment), limits)


def test_an_ast_deeper_than_the_parser_allows_is_unknown_not_a_recursion_error() -> None:
    """The parser refuses such depths, but the evaluator's own bound must not rely on it."""
    where = {"lineno": 1, "col_offset": 0, "end_lineno": 1, "end_col_offset": 1}
    node: ast.expr = ast.Constant(1, **where)
    for _ in range(20_000):  # built directly: ast.fix_missing_locations would itself recurse too deep
        node = ast.BinOp(node, ast.Add(), ast.Constant(1, **where), **where)
    workspace = Workspace()

    evaluator = _evaluator(workspace)
    with deadline(), StepMeter().installed() as meter:
        value = evaluator.evaluate(node, _frame(workspace))

    assert isinstance(value, Unknown)
    assert meter.steps <= Limits().steps + 1
    # Even with the depth limit lifted, Python's recursion limit is caught, not raised.
    unbounded = _evaluator(workspace, Limits(expr_depth=10**9, steps=10**9))
    assert isinstance(unbounded.evaluate(node, _frame(workspace)), Unknown)


CYCLES = {
    "a = b; b = a": "a = b\nb = a\n" + put("bad", "(a, b)", "P(a)"),
    "three-way cycle": "a = b + 1\nb = c * 2\nc = a\n" + put("bad", "(a, b, c)"),
    "augmented self-reference": "a = 1\nfor i in range(10):\n    a += a\n    a *= a\n" + put("bad", "(a,)"),
    "class defaulting to itself": textwrap.dedent("""\
        class C:
            child: 'C' = C()
            size = C.size
        c = C()
        """)
    + put("bad", "(c.child.child.size,)"),
    "class whose base is itself": "class C(C):\n    pass\nclass D(E):\n    x = 1\nclass E(D):\n    y = 2\n"
    + put("bad", "(E.x, D.y, C.z)"),
    "dataclasses referencing each other": textwrap.dedent("""\
        from dataclasses import dataclass, field
        @dataclass
        class A:
            b: 'B' = field(default_factory=lambda: B())
            n: int = 4
        @dataclass
        class B:
            a: A = A()
            n: int = A().n
        """)
    + put("bad", "(B().a.b.a.n, A().b.n)"),
    "__init__ building itself": textwrap.dedent("""\
        class C:
            def __init__(self):
                self.c = C()
                self.n = self.c.n
        c = C()
        """)
    + put("bad", "(c.n,)"),
    "property returning itself": textwrap.dedent("""\
        class C:
            @property
            def n(self):
                return self.n * 2
        """)
    + put("bad", "(C().n,)"),
}


@pytest.mark.parametrize("body", CYCLES.values(), ids=CYCLES.keys())
def test_self_referential_definitions_end(body: str) -> None:
    analysis = analyze_within(HEAD + body + OK_SITE)

    ok_site(analysis)


def _write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(textwrap.dedent(content), encoding="utf-8")


def test_modules_importing_each_other(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.a import A\nfrom . import b\nfrom pkg import *\n",
            "pkg/a.py": "from .b import B\nfrom . import a\nimport pkg.a as me\nA = B + me.A\n",
            "pkg/b.py": "from .a import A\nfrom pkg import b\nB = A * b.B\nWIDTH = 16\n",
            "self.py": "from self import X\nimport self\nX = self.X\n",
            "main.py": HEAD
            + "from pkg.a import A\nfrom pkg.b import B, WIDTH\nfrom self import X\nimport pkg\n"
            + put("bad", "(A, B, X, pkg.a.A)")
            + put("width", "(8, WIDTH)")
            + OK_SITE,
        },
    )
    analyzer = Analyzer(Workspace([tmp_path]))
    main_py = tmp_path / "main.py"

    result = analyze_within(main_py.read_text(), str(main_py), analyzer)

    ok_site(result)
    assert [s.shard_shape for s in result.sites if s.name == "width"] == [(4, 16)]
    for path in sorted(tmp_path.rglob("*.py")):
        analyzer.analyze(str(path), path.read_text())  # each end of each cycle, from a warm cache


TEXT_FORMS = {
    "byte-order mark": "\ufeff" + HEAD + OK_SITE,
    "CRLF": (HEAD + OK_SITE).replace("\n", "\r\n"),
    "CR only": (HEAD + OK_SITE).replace("\n", "\r"),
    "mixed line endings": HEAD.replace("\n", "\r\n", 2).replace("\n", "\r", 1) + OK_SITE,
    "tabs": HEAD + "if True:\n\tx = 1\n\tif x:\n\t\ty = 2\n" + OK_SITE,
    "astral-plane identifiers": HEAD + "𠀀𠀁 = 'data'\n𝓍 = 8\n" + OK_SITE + put("𠀂", "(𝓍, 16)", "P(𠀀𠀁)"),
    "form feed and Unicode line separators": HEAD + "\x0cx = 1\u2028\n" + "# \u2029 \x85\n" + OK_SITE,
    "no final newline": HEAD + OK_SITE.rstrip("\n"),
    "NUL byte": HEAD + "x = 1\x00\n" + OK_SITE,
    "lone surrogate (only an LSP client can send one)": HEAD + "s = '\ud800'\n# \udfff\n" + OK_SITE,
}


@pytest.mark.parametrize("text", TEXT_FORMS.values(), ids=TEXT_FORMS.keys())
def test_encodings_line_endings_and_odd_characters(text: str) -> None:
    analysis = analyze_within(text)

    site = ok_site(analysis)
    assert source_lines(text)[site.span.line].startswith("ok = jax.device_put")


def test_astral_identifiers_have_string_columns() -> None:
    """Python reads `𝔶` as `y` (NFKC); `𠀂` (CJK, outside the BMP) stays itself."""
    text = HEAD + "𠀀𠀁 = 'data'\n𝓍 = 8\n" + put("𠀂", "(𝓍, 16)", "P(𠀀𠀁)") + put("𝔶", "(𝓍, 16)", "P(𠀀𠀁)")

    analysis = analyze_within(text)

    assert [s.name for s in analysis.sites] == ["𠀂", "y"]
    site = analysis.sites[0]
    assert site.shard_shape == (4, 16)
    assert site.span.line == 6 and site.span.column == text.split("\n")[6].index("jax")


@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n", "\ufeff", "# only a comment"])
def test_empty_files(text: str) -> None:
    analysis = analyze_within(text)

    assert analysis.sites == () and analysis.diagnostics == ()


def _check_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object], str]:
    code = main(["check", "--output-format", "json", *argv])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


UNREADABLE = {
    "binary.py": bytes(range(256)) * 64,
    "latin1.py": "# modèle\nimport jax\n".encode("latin-1"),
    "utf16.py": (HEAD + OK_SITE).encode("utf-16"),
    "truncated_utf8.py": (HEAD + "# é").encode()[:-1],
    "broken.ipynb": b'{"cells": [{"cell_type": "code", "source": "x = 1"',
    "not_a_notebook.ipynb": b'{"cells": {"a": 1}}',
    "binary.ipynb": bytes(range(256)),
    "bad_cell.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": 42}]}).encode(),
}


def test_unreadable_files_become_sh210_through_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, {**UNREADABLE, "good.py": HEAD + OK_SITE})
    monkeypatch.chdir(tmp_path)

    with deadline():
        code, out, err = _check_json(capsys, ".", "--show-layouts")

    assert code == 1 and "internal error" not in err
    diagnostics = out["diagnostics"]
    assert isinstance(diagnostics, list)
    assert sorted((d["path"], d["code"], d["line"]) for d in diagnostics) == [
        (name, "SH210", 1) for name in sorted(UNREADABLE)
    ]
    layouts = out["layouts"]
    assert isinstance(layouts, list)
    assert [(entry["path"], entry["shard_shape"]) for entry in layouts] == [("good.py", [4, 16])]


def test_garbage_decoded_leniently_is_analysed_without_crashing() -> None:
    """The server and imports decode with errors="replace"; the analyzer must take whatever results."""
    for blob in UNREADABLE.values():
        analyze_within(blob.decode("utf-8", errors="replace"))
        analyze_within(HEAD + blob.decode("latin-1") + "\n" + OK_SITE)


def test_a_10_mb_file_gets_a_diagnostic_not_an_analysis(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = HEAD + put("x", "(8, 16)") * (10_000_000 // len(put("x", "(8, 16)")))
    (tmp_path / "huge.py").write_text(text)
    monkeypatch.chdir(tmp_path)

    analysis = analyze_within(text)
    with deadline():
        code, out, err = _check_json(capsys, "huge.py")

    assert [(d.code, d.span.line) for d in analysis.diagnostics] == [("SH210", 0)]
    assert f"shardls analyses files of up to {MAX_FILE_CHARS:,}" in analysis.diagnostics[0].message
    assert analysis.sites == ()
    # shardls's own bound, not a problem of the code: a warning, which does not fail CI
    assert code == 0 and err == ""
    assert [(d["code"], d["severity"]) for d in out["diagnostics"]] == [("SH210", "warning")]  # type: ignore[union-attr]


def test_a_100000_line_file_gets_a_diagnostic_not_an_analysis() -> None:
    text = HEAD + "x = 1\n" * 100_000

    analysis = analyze_within(text)

    assert [d.code for d in analysis.diagnostics] == ["SH210"]
    assert f"the file has 100,005 lines; shardls analyses files of up to {MAX_FILE_LINES:,}" in (
        analysis.diagnostics[0].message
    )


def test_an_oversized_module_is_not_read_for_imports(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "big.py": "WIDTH = 16\n" + "x = 1\n" * MAX_FILE_LINES,
            "main.py": HEAD + "from big import WIDTH\n" + put("bad", "(8, WIDTH)") + OK_SITE,
        },
    )
    main_py = tmp_path / "main.py"

    result = analyze_within(main_py.read_text(), str(main_py), Analyzer(Workspace([tmp_path])))

    ok_site(result)
    assert [s.shard_shape for s in result.sites if s.name == "bad"] != [(4, 16)]


MEASURE = """
import re, sys
from shardls.analysis.analyzer import Analyzer
text = sys.stdin.read()
analysis = Analyzer().analyze("/virtual/model.py", text)
codes = sorted({d.code for d in analysis.diagnostics})
peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
print(peak, len(analysis.sites), *codes)
"""
"""The analysis of one text in a fresh process: its peak resident memory, sites and codes. The
peak is the process's own (VmHWM, reset by exec), not ru_maxrss, which keeps the peak of the
forked pytest worker it was started from."""

AT_THE_BOUNDS = {
    # The slowest shapes found for files just inside the bounds (docs/security.md).
    "1 MB of device_put calls": HEAD
    + put("x", "(8, 16)") * ((MAX_FILE_CHARS - 400) // len(put("x", "(8, 16)"))),
    "1 MB of meshes": HEAD + "m = jax.make_mesh((2, 4), ('a', 'b'))\n" * ((MAX_FILE_CHARS - 400) // 39),
    "1 MB of unclosed calls": HEAD + put("x", "(8, 16)")[:-2] * ((MAX_FILE_CHARS - 400) // 72),
    "50,000 lines of unclosed brackets": HEAD + "(\n" * (MAX_FILE_LINES - 10),
    "50,000 stacked decorators": HEAD + "@a\n" * (MAX_FILE_LINES - 10),
}


@pytest.mark.parametrize("text", AT_THE_BOUNDS.values(), ids=AT_THE_BOUNDS.keys())
def test_files_at_the_size_bounds_are_analysed_within_the_memory_bound(text: str) -> None:
    """Their work is capped by the file budget (`Limits.file_steps_cap`); their time is measured
    by benchmarks/bench_robustness.py."""
    completed = subprocess.run(
        [sys.executable, "-c", MEASURE], input=text, capture_output=True, text=True, timeout=HANG
    )

    assert completed.returncode == 0, completed.stderr
    peak, _sites, *codes = completed.stdout.split()
    assert int(peak) < 512 * 2**20, f"{int(peak) / 2**20:.0f} MiB resident"
    assert "SH210" not in codes  # analysed, not refused
