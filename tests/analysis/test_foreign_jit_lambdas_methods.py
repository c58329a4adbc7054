"""The helpers of other modules beyond plain functions (issue #12 §2): a function jitted with
shardings in another module (`foreign_jit.py`), lambdas bound to a name (`lambda_defs.py`, in
the same file and across files), methods of a class imported from another module, a helper's
helper in a third module, and a plain module that only re-exports a helper. Each gives the call
the layout the same code would give inline, its problems at most warnings naming the helper."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import workspace

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.core import Severity

HEADER = """\
import jax
import jax.numpy as jnp
from functools import partial
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""

TRAIN_LIB = (
    HEADER
    + """
def train_step(x, w):
    return x @ w


step = jax.jit(
    train_step,
    in_shardings=(NamedSharding(mesh, P("data")), NamedSharding(mesh, P(None, "model"))),
    out_shardings=NamedSharding(mesh, P("data", "model")),
)


@partial(jax.jit, in_shardings=NamedSharding(mesh, P("model")))
def double(x):
    return x * 2
"""
)

SHARDING = (
    HEADER
    + """
PS = lambda *a: NamedSharding(mesh, P(*a))
shard = lambda x, *a: jax.device_put(x, NamedSharding(mesh, P(*a)))


class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def put(self, x, spec):
        return jax.device_put(x, NamedSharding(self.mesh, spec))
"""
)


def _analysis(
    tmp_path: Path, main: str, files: dict[str, str] | None = None
) -> tuple[Analyzer, FileAnalysis]:
    sources = {
        "pkg/__init__.py": "",
        "pkg/train_lib.py": TRAIN_LIB,
        "pkg/sharding.py": SHARDING,
        **(files or {}),
    }
    analyzer = workspace(tmp_path, {**sources, "pkg/main.py": HEADER + main})
    return analyzer, analyzer.analyze(str(tmp_path / "pkg" / "main.py"), HEADER + main)


def _on_line(analysis: FileAnalysis, line: int) -> list[Site]:
    """The sites on a line of the body after HEADER (1-based, as written below it)."""
    return [s for s in analysis.sites if s.span.line == HEADER.count("\n") + line - 1]


def _layouts(sites: list[Site]) -> set[tuple[SiteKind, str | None, tuple[object, ...] | None]]:
    return {
        (s.kind, s.name, tuple(s.layout.shard_shape) if s.layout and s.layout.shard_shape else None)
        for s in sites
        if s.kind is not SiteKind.NAMED_SHARDING
    }


def test_a_function_jitted_in_another_module_gives_its_call_the_in_and_out_layouts(tmp_path: Path) -> None:
    calls = "y = step(jnp.zeros((8, 16)), jnp.zeros((16, 32)))\nz = double(jnp.zeros((8, 4)))\n"
    _, across = _analysis(tmp_path / "a", "from .train_lib import double, step\n" + calls)
    inline = HEADER + TRAIN_LIB.removeprefix(HEADER)
    _, same = _analysis(tmp_path / "b", inline.removeprefix(HEADER) + calls)
    first = inline.count("\n") - HEADER.count("\n") + 1
    assert (
        _layouts(_on_line(across, 2))
        == _layouts(_on_line(same, first))
        == {
            (SiteKind.JIT_IN, "x", (4, 16)),
            (SiteKind.JIT_IN, "w", (16, 8)),
            (SiteKind.JIT_OUT, "y", (4, 8)),
        }
    )
    assert (
        _layouts(_on_line(across, 3))
        == _layouts(_on_line(same, first + 1))
        == {(SiteKind.JIT_IN, "x", (2, 4))}
    )
    assert all("via step() in train_lib.py:12" in s.assumptions for s in _on_line(across, 2))
    assert all("via double() in train_lib.py:19" in s.assumptions for s in _on_line(across, 3))
    assert not across.diagnostics


def test_a_problem_at_the_call_of_a_foreign_jit_is_a_warning_naming_it(tmp_path: Path) -> None:
    _, analysis = _analysis(tmp_path, "from .train_lib import double\nbad = double(jnp.zeros((6, 4)))\n")
    (problem,) = analysis.diagnostics
    assert (problem.code, problem.severity) == ("SH001", Severity.WARNING)
    assert problem.span.line == HEADER.count("\n") + 1
    assert "double() in train_lib.py:19" in problem.message


def test_lambdas_bound_to_a_name_are_helpers_in_their_own_file(tmp_path: Path) -> None:
    body = SHARDING.removeprefix(HEADER)
    calls = (
        "a = jax.device_put(jnp.zeros((8, 8)), PS('data'))\n"
        "b = shard(jnp.zeros((8, 8)), 'data', 'model')\n"
        "f = lambda x: jax.sharding.NamedSharding(mesh, x)\n"  # flax linen_meta_test.py:174
        "c = jax.device_put(jnp.zeros((8, 8)), f(P('model')))\n"
    )
    _, analysis = _analysis(tmp_path, body + calls)
    first = body.count("\n") + 1
    assert _layouts(_on_line(analysis, first)) == {(SiteKind.DEVICE_PUT, "a", (4, 8))}
    assert _layouts(_on_line(analysis, first + 1)) == {(SiteKind.DEVICE_PUT, "b", (4, 2))}
    assert _layouts(_on_line(analysis, first + 3)) == {(SiteKind.DEVICE_PUT, "c", (2, 8))}
    (put,) = [s for s in _on_line(analysis, first + 1) if s.kind is SiteKind.DEVICE_PUT]
    assert "via shard() in main.py:9" in put.assumptions
    assert not analysis.diagnostics


def test_lambdas_of_another_module_are_helpers_and_their_problems_warnings(tmp_path: Path) -> None:
    _, analysis = _analysis(
        tmp_path,
        "from .sharding import PS, shard\n"
        "a = jax.device_put(jnp.zeros((8, 8)), PS('data'))\n"
        "b = shard(jnp.zeros((8, 8)), 'data', 'model')\n"
        "bad = shard(jnp.zeros((6, 8)), 'model')\n",
    )
    assert _layouts(_on_line(analysis, 2)) == {(SiteKind.DEVICE_PUT, "a", (4, 8))}
    assert _layouts(_on_line(analysis, 3)) == {(SiteKind.DEVICE_PUT, "b", (4, 2))}
    (problem,) = analysis.diagnostics
    assert (problem.code, problem.severity) == ("SH001", Severity.WARNING)
    assert "shard() in sharding.py:9" in problem.message


def test_methods_of_a_class_of_another_module_give_their_layout_at_the_call(tmp_path: Path) -> None:
    _, analysis = _analysis(
        tmp_path,
        "from .sharding import Sharder\n"
        "s = Sharder(mesh)\n"
        "a = s.put(jnp.zeros((8, 8)), P('data'))\n"
        "class Model:\n"
        "    def __init__(self):\n"
        "        self.sharder = Sharder(mesh)\n"
        "    def embed(self):\n"
        "        e = self.sharder.put(jnp.zeros((8, 8)), P('model'))\n"
        "        return e\n"
        "Model().embed()\n",
    )
    assert _layouts(_on_line(analysis, 3)) == {(SiteKind.DEVICE_PUT, "a", (4, 8))}
    assert _layouts(_on_line(analysis, 8)) == {(SiteKind.DEVICE_PUT, "e", (2, 8))}
    (site,) = [s for s in _on_line(analysis, 3) if s.kind is SiteKind.DEVICE_PUT]
    assert "via Sharder.put() in sharding.py:16" in site.assumptions


IMPL = "import jax\nfrom jax.sharding import NamedSharding\n\n\ndef put(x, mesh, spec):\n    return jax.device_put(x, NamedSharding(mesh, spec))\n"


def test_a_helpers_helper_in_a_third_module_and_a_plain_reexport(tmp_path: Path) -> None:
    utils = (
        "from jax.sharding import PartitionSpec as P\n"
        "from .impl import put\n\n\n"
        "def put_rows(x, mesh):\n"
        "    return put(x, mesh, P('data'))\n"
    )
    _, analysis = _analysis(
        tmp_path,
        "from .utils import put, put_rows\n"
        "rows = put_rows(jnp.zeros((8, 4)), mesh)\n"
        "cols = put(jnp.zeros((8, 4)), mesh, P(None, 'model'))\n",
        {"pkg/impl.py": IMPL, "pkg/utils.py": utils},
    )
    assert _layouts(_on_line(analysis, 2)) == {(SiteKind.DEVICE_PUT, "rows", (4, 4))}
    assert _layouts(_on_line(analysis, 3)) == {(SiteKind.DEVICE_PUT, "cols", (8, 1))}
    (rows,) = [s for s in _on_line(analysis, 2) if s.kind is SiteKind.DEVICE_PUT]
    assert "via put_rows() in utils.py:5" in rows.assumptions
    (cols,) = [s for s in _on_line(analysis, 3) if s.kind is SiteKind.DEVICE_PUT]
    assert "via put() in impl.py:5" in cols.assumptions


def test_a_cycle_of_imports_between_helpers_ends(tmp_path: Path) -> None:
    a = (
        "import jax\nfrom jax.sharding import NamedSharding\nfrom .b import g\n\n\n"
        "def f(x, mesh):\n    return g(x, mesh)\n\n\n"
        "def put(x, mesh, spec):\n    return jax.device_put(x, NamedSharding(mesh, spec))\n"
    )
    b = (
        "from jax.sharding import PartitionSpec as P\nfrom .a import f, put\n\n\n"
        "def g(x, mesh):\n    return f(x, mesh)\n\n\n"
        "def h(x, mesh):\n    return put(x, mesh, P('data'))\n"
    )
    _, analysis = _analysis(
        tmp_path,
        "from .a import f\nfrom .b import g, h\n"
        "x = f(jnp.zeros((8, 8)), mesh)\ny = g(jnp.zeros((8, 8)), mesh)\nz = h(jnp.zeros((8, 8)), mesh)\n",
        {"pkg/a.py": a, "pkg/b.py": b},
    )
    assert not _on_line(analysis, 3) and not _on_line(analysis, 4)
    assert _layouts(_on_line(analysis, 5)) == {(SiteKind.DEVICE_PUT, "z", (4, 8))}


def test_editing_the_jitted_functions_module_analyses_its_callers_again(tmp_path: Path) -> None:
    main = "from .train_lib import double\nz = double(jnp.zeros((8, 4)))\n"
    analyzer, before = _analysis(tmp_path, main)
    assert _layouts(_on_line(before, 2)) == {(SiteKind.JIT_IN, "x", (2, 4))}
    analyzer.workspace.set_text(
        str(tmp_path / "pkg" / "train_lib.py"),
        TRAIN_LIB.replace(
            'in_shardings=NamedSharding(mesh, P("model"))', 'in_shardings=NamedSharding(mesh, P("data"))'
        ),
    )
    path = str(tmp_path / "pkg" / "main.py")
    after = analyzer.analyze(path, HEADER + main)
    assert _layouts(_on_line(after, 2)) == {(SiteKind.JIT_IN, "x", (4, 4))}
    assert after == Analyzer(analyzer.workspace).analyze(path, HEADER + main)
