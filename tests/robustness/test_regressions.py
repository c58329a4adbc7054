"""One test per problem the robustness work found (docs/security.md lists them)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from raw_client import RawServer
from robust_helpers import HEAD, OK_SITE, analyze_within, deadline, ok_site

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluator import Evaluator, Frame, Limits
from shardls.analysis.facts import MeshFact
from shardls.analysis.library import Environment, Library
from shardls.analysis.source import SegmentParser
from shardls.analysis.values import Const, Unknown
from shardls.analysis.workspace import Workspace
from shardls.config import find_config
from shardls.core import FLOAT32, Mesh, PartitionSpec, compute_layout
from shardls.render.markdown import axis_lines
from shardls.server.strings import literal_at, string_literals


def test_parse_recovery_costs_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each unclosed call was re-joined with the 12 following segments before giving up: 10,000
    such lines took ~7 s and 100,000 over a minute. Merging is now bounded by a few times the
    file's size: the characters handed to `ast.parse` are counted (distinct lines, so that no
    cache hides the work)."""
    text = "".join(
        f"x{i} = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data'))\n" for i in range(10_000)
    )
    parse, parsed_chars = ast.parse, [0]

    def counted_parse(source: str, *args: object, **kwargs: object) -> ast.Module:
        parsed_chars[0] += len(source)
        return parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ast, "parse", counted_parse)
    with deadline():
        parsed = SegmentParser().parse(text)

    assert len(parsed.errors) == 10_000
    # The merge budget (4x the text plus 100,000) and the one parse of each segment; unbounded
    # re-joining parsed over 20x the text.
    assert parsed_chars[0] <= 6 * len(text) + 100_000, parsed_chars[0] / len(text)


def test_merging_still_joins_a_multiline_string_after_many_errors() -> None:
    """The budget must not take recovery away from an ordinary file with a few broken lines."""
    text = "x = f(1\n" * 50 + 'doc = """\nnot code\n"""\ny = 2\n'

    parsed = SegmentParser().parse(text)

    assert [line for line, _ in parsed.errors] == list(range(50))
    assert parsed.segments[-2].text == 'doc = """\nnot code\n"""'


def test_hover_scan_of_unterminated_triple_quotes_on_the_cursor_line_ends() -> None:
    """Found by the server fuzz: a hover on a line opening `'''` that never closes rescanned that
    line forever, growing the list of literals until the server used 10 GB."""
    lines = ["class Block:", "    def f(self):", "        self.embed = nnx.Embe'''d(vocab, 'dim')"]

    with deadline():
        found, literal = string_literals(lines), literal_at(lines, 2, 40)

    assert [f.value for f in found] == ["d(vocab, 'dim')"]
    assert literal is not None and literal.value == "d(vocab, 'dim')"


def test_a_path_with_a_nul_byte_is_analysed() -> None:
    """Found by the LSP abuse test: `file:///%00/a.py` from a client made every feature fail in
    `Path.resolve()` (ValueError: embedded null byte), in the configuration lookup and the
    workspace's module naming."""
    path = "/virtual/\x00/model.py"
    text = HEAD + OK_SITE

    analysis = Analyzer(Workspace([Path("/virtual/\x00")])).analyze(path, text)

    ok_site(analysis)
    assert find_config(Path(path)) is None


def test_a_request_with_params_of_the_wrong_type_is_answered(tmp_path: Path) -> None:
    """Found by the LSP abuse test: pygls dropped such a request without a response, so a client
    waited for it forever. The server now answers InvalidParams."""
    server = RawServer(tmp_path / "server.log")
    try:
        server.initialize(tmp_path)

        answer = server.call("textDocument/hover", {"textDocument": 5, "position": []})

        assert answer["error"]["code"] == -32602
    finally:
        server.close()


def test_a_request_after_shutdown_is_answered(tmp_path: Path) -> None:
    """Found by the LSP abuse test: pygls ignored it without a response (the LSP asks for
    InvalidRequest), so a client waited for it forever."""
    server = RawServer(tmp_path / "server.log")
    try:
        server.initialize(tmp_path)
        server.call("shutdown")

        answer = server.call(
            "textDocument/hover",
            {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}},
        )

        assert answer["error"]["code"] == -32600
    finally:
        server.close()


def test_an_edit_to_a_document_that_is_not_open_is_ignored_quietly(tmp_path: Path) -> None:
    """Found by the LSP abuse test once it also watched window/showMessage: pygls's didChange
    raised KeyError for a document (or notebook) that was never opened, and showed the user
    "Error in server: KeyError". The edit is now ignored with a warning in the log."""
    server = RawServer(tmp_path / "server.log")
    try:
        server.notify(  # before initialize: no workspace at all
            "textDocument/didChange",
            {"textDocument": {"uri": "file:///early.py", "version": 2}, "contentChanges": [{"text": "x"}]},
        )
        server.initialize(tmp_path)
        uri = (tmp_path / "model.py").as_uri()
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": HEAD + OK_SITE}]},
        )
        server.notify(
            "notebookDocument/didChange",
            {"notebookDocument": {"uri": (tmp_path / "a.ipynb").as_uri(), "version": 2}, "change": {}},
        )
        server.open(uri, HEAD + OK_SITE)

        assert server.hover(uri, 4, 10) is not None  # the edit before didOpen was not applied
        assert server.errors_logged() == []
    finally:
        server.close()
    assert "which is not open: ignored" in (tmp_path / "server.log").read_text()


def test_notifications_are_not_kept(tmp_path: Path) -> None:
    """Found by the memory test: pygls kept the future of every notification it handled (about
    2 KB each), so each keystroke's didChange grew the server for its whole life."""
    server = RawServer(tmp_path / "server.log")
    try:
        server.initialize(tmp_path)
        uri = (tmp_path / "model.py").as_uri()
        server.open(uri, HEAD + OK_SITE)
        change = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": []}
        server.hover(uri, 4, 10)
        before = server.rss()

        body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change}).encode()
        for _ in range(10):  # in rounds, so that what is measured is kept memory, not a burst's peak
            server.send_bytes((b"Content-Length: %d\r\n\r\n" % len(body) + body) * 2_000)
            server.hover(uri, 4, 10)

        assert server.rss() - before < 10 * 2**20, f"grew {(server.rss() - before) / 2**20:.1f} MiB"
    finally:
        server.close()


def test_a_mesh_with_fewer_sizes_than_names_gets_problems_not_a_key_error() -> None:
    """Found by benchmarks/fuzz_long.py: `SHARED_MESH_SHAPE = (, jax.device_count())` (a deleted
    token) left `make_mesh(SHARED_MESH_SHAPE, ("fsdp", "tp"))` with one size for two names, and
    the quick-fix search for an indivisible dimension raised KeyError: 'tp'."""
    mesh = Mesh(("fsdp", "tp"), (8,))

    layout = compute_layout(mesh, PartitionSpec.of("fsdp", "tp"), (4, 33))
    analysis = analyze_within(
        HEAD
        + "SHAPE = (, jax.device_count())\nshared = jax.make_mesh(SHAPE, ('fsdp', 'tp'))\n"
        + "c = jax.device_put(jnp.zeros((4, 32)), NamedSharding(shared, P('fsdp', 'tp')))\n"
        + OK_SITE
    )

    assert layout.shard_shape is None and layout.problems
    ok_site(analysis)


def test_a_hover_on_an_axis_the_mesh_has_no_size_for() -> None:
    """Found by the server run of benchmarks/fuzz_long.py: after a deleted token,
    `jax.make_mesh((2, ), ("data", "model"))`, a hover on "model" raised IndexError (the hover
    read the size at the name's index)."""
    mesh = Mesh(("data", "model"), (2,))

    lines = axis_lines("model", MeshFact(mesh, None, "mesh", "jax.make_mesh at line 6"))

    assert lines[0] == "mesh axis `model`: no size (axis sizes (2,) for names ('data', 'model')), Auto"


SLOW_ANALYSIS = (Path(__file__).parent / "slow_analysis.txt").read_text()
"""Found by the long fuzz run through the server: nested comprehensions over names that `def`,
`class` and `for` rebind made the walker ask ~2,200 questions of up to 20,000 steps each (27 s
for 64 lines; 31 s and 39 s for the generated programs it was cut down from)."""


def test_the_questions_about_one_file_share_one_budget() -> None:
    analyze_within(SLOW_ANALYSIS)


def test_the_search_for_the_workspace_mesh_shares_one_budget(tmp_path: Path) -> None:
    """A file without a mesh looks for the only mesh of the workspace: each hostile file there
    took its own budget (six of them: 3.3 s for one check)."""
    for index in range(6):
        (tmp_path / f"hostile_{index}.py").write_text(SLOW_ANALYSIS)
    path = tmp_path / "model.py"
    path.write_text(HEAD + OK_SITE)

    analysis = analyze_within(HEAD + OK_SITE, str(path), Analyzer(Workspace([tmp_path])))

    ok_site(analysis)


def test_no_budget_error_escapes_an_evaluation_started_outside_a_question() -> None:
    """`mro`, `base_qualnames` and `instantiate` evaluate through `eval` directly; once a question
    had used its steps, the next such call raised BudgetExceeded out of `shardls check`."""
    workspace = Workspace()
    module = workspace.module("/virtual/model.py", "x = [[i * j for i in range(90)] for j in range(90)]\n")
    frame = Frame(module, module.scope, module.source.segments[0], None)
    environment = Environment(Const(8), FLOAT32, False)
    evaluator = Evaluator(workspace, Library(environment), Limits(steps=100), budget=1_000)
    expression = module.source.segments[0].body[0].value  # type: ignore[attr-defined]

    assert isinstance(evaluator.evaluate(expression, frame), Unknown)
    assert isinstance(evaluator.eval(expression, frame), Unknown)
    for _ in range(20):
        evaluator.evaluate(expression, frame)
    assert evaluator.budget_left == 0
    assert evaluator.evaluate(expression, frame) == Unknown(
        "the evaluation budget of this statement or file is used up"
    )


def _nested_helpers(methods: int) -> str:
    """Test methods each defining helpers that call one another through `jax.jit` and `nnx.vmap`,
    as Flax's tests/nnx/transforms_test.py does (8,000 lines in one class)."""
    method = (
        "    def test_{i}(self):\n"
        "        def f(x):\n"
        "            return nnx.vmap(g)(x)\n"
        "        def g(x):\n"
        "            return jax.jit(f)(x)\n"
        "        y = f(jnp.ones((4, 8)))\n"
        "        return g(y)\n\n"
    )
    return (
        HEAD
        + "from flax import nnx\n\n\nclass TransformsTest:\n"
        + "".join(method.format(i=i) for i in range(methods))
    )


def test_the_walk_of_nested_helpers_is_bounded() -> None:
    """Each helper was walked again for every caller, and each asked for a regex scan of the
    whole class: 100 such methods (18 KB) took over two minutes, the real file over ten."""
    analysis = analyze_within(_nested_helpers(200) + OK_SITE)

    ok_site(analysis)
