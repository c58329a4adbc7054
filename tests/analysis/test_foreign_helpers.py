"""Placement helpers of another module of the workspace give their layout at each call
(`analysis/foreign_calls.py`): through every way of importing them, with the caller's shapes,
mesh and spec, naming the helper; never past their bounds; and analysed again when the helper's
module changes."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import workspace

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.core import Severity

UTILS = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec


def put(x, mesh, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


def shard(x, mesh, *names):
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, PartitionSpec(*names)))


def put_rows(x, mesh):
    return put(x, mesh, PartitionSpec("data"))


def loop(x, mesh):
    return loop(x, mesh)
"""

HEADER = """\
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""


def _analysis(
    tmp_path: Path, main: str, files: dict[str, str] | None = None
) -> tuple[Analyzer, FileAnalysis]:
    sources = {"pkg/__init__.py": "from .utils import put\n", "pkg/utils.py": UTILS, **(files or {})}
    analyzer = workspace(tmp_path, {**sources, "pkg/main.py": HEADER + main})
    path = str(tmp_path / "pkg" / "main.py")
    return analyzer, analyzer.analyze(path, HEADER + main)


def _on_line(analysis: FileAnalysis, line: int) -> list[Site]:
    """The sites on a line of the body after HEADER (1-based, as written below it)."""
    first = HEADER.count("\n")
    return [s for s in analysis.sites if s.span.line == first + line - 1]


def _shard(site: Site) -> tuple[object, ...]:
    assert site.layout is not None and site.layout.shard_shape is not None
    return tuple(site.layout.shard_shape)


def test_every_way_of_importing_a_helper_gives_the_call_its_layout(tmp_path: Path) -> None:
    _, analysis = _analysis(
        tmp_path,
        "from . import utils\n"
        "from . import put as exported\n"
        "from .utils import put, shard\n"
        "import pkg.utils as absolute\n"
        "a = put(jnp.zeros((16, 8)), mesh, P('data', 'model'))\n"
        "b = utils.put(jnp.zeros((8, 8)), mesh, P('model'))\n"
        "c = exported(jnp.zeros((4, 8)), mesh, P(None, 'model'))\n"
        "d = absolute.put(jnp.zeros((2, 4)), mesh, P('data'))\n"
        "e = shard(jnp.zeros((8, 8)), mesh, 'data', None)\n",
    )
    expected = {5: ("a", (8, 2)), 6: ("b", (2, 8)), 7: ("c", (4, 2)), 8: ("d", (1, 4)), 9: ("e", (4, 8))}
    for line, (name, shard) in expected.items():
        (site,) = [s for s in _on_line(analysis, line) if s.kind is not SiteKind.NAMED_SHARDING]
        assert (site.name, _shard(site)) == (name, shard)
        assert any(note.startswith("via ") and "utils.py:" in note for note in site.assumptions), site


def test_the_site_names_the_helper_and_keeps_the_callers_provenance(tmp_path: Path) -> None:
    _, analysis = _analysis(
        tmp_path, "from .utils import put\nw = put(jnp.zeros((16, 8)), mesh, P('data'))\n"
    )
    (site,) = [s for s in _on_line(analysis, 2) if s.kind is SiteKind.DEVICE_PUT]
    assert "via put() in utils.py:5" in site.assumptions
    assert site.mesh is not None and "make_mesh" in (site.mesh.source or "") + site.mesh.selection
    assert site.path == str(tmp_path / "pkg" / "main.py")


def test_a_problem_inside_the_helper_is_a_warning_at_the_call(tmp_path: Path) -> None:
    """JAX rejects the call, but only if the helper places what it is given as shardls reads it:
    one that rewrites the spec under a condition shardls cannot decide must not make an error."""
    _, analysis = _analysis(
        tmp_path, "from .utils import put\nbad = put(jnp.zeros((6, 8)), mesh, P('model'))\n"
    )
    (problem,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert problem.severity is Severity.WARNING
    assert problem.span.line == HEADER.count("\n") + 1  # on the spec written at the call
    assert "the helper (put() in utils.py:5) places what it is given" in problem.message


def test_a_helper_that_rewrites_the_spec_under_an_undecided_condition_makes_no_error(tmp_path: Path) -> None:
    """Modelled on axlearn's `utils.maybe_shard`, which drops the axes a `shard_map` made Manual."""
    rewrites = (
        "import jax\n"
        "from jax.sharding import PartitionSpec\n\n\n"
        "def _relaxed(spec):\n"
        "    if not jax.sharding.get_abstract_mesh().manual_axes:\n"
        "        return spec\n"
        "    return PartitionSpec(*[PartitionSpec.UNCONSTRAINED for _ in spec])\n\n\n"
        "def maybe_shard(x, spec):\n"
        "    return jax.lax.with_sharding_constraint(x, _relaxed(spec))\n"
    )
    _, analysis = _analysis(
        tmp_path,
        "from .relax import maybe_shard\nbad = maybe_shard(jnp.zeros((6, 8)), P('model'))\n",
        {"pkg/relax.py": rewrites},
    )
    assert not analysis.diagnostics
    sites = [s for s in _on_line(analysis, 2) if s.kind is SiteKind.CONSTRAINT]
    assert sites and all(site.name == "bad" for site in sites)  # one per outcome of the condition


def test_a_helpers_helper_is_followed_and_recursion_is_bounded(tmp_path: Path) -> None:
    _, analysis = _analysis(
        tmp_path,
        "from .utils import loop, put_rows\n"
        "rows = put_rows(jnp.zeros((8, 4)), mesh)\n"
        "same = loop(jnp.zeros((8, 4)), mesh)\n",
    )
    (site,) = [s for s in _on_line(analysis, 2) if s.kind is SiteKind.DEVICE_PUT]
    assert _shard(site) == (4, 4)
    assert "via put_rows() in utils.py:13" in site.assumptions
    assert not _on_line(analysis, 3)


def test_the_helpers_own_analysis_is_unchanged_by_its_callers(tmp_path: Path) -> None:
    analyzer, _ = _analysis(tmp_path, "")
    path = str(tmp_path / "pkg" / "utils.py")
    uncalled = analyzer.analyze(path, UTILS)
    called, _ = _analysis(tmp_path, "from .utils import put\nw = put(jnp.zeros((16, 8)), mesh, P('data'))\n")
    assert called.analyze(path, UTILS) == uncalled
    assert [s.span.line for s in uncalled.sites if s.kind is SiteKind.DEVICE_PUT] == [5]


def test_editing_the_helper_analyses_its_callers_again(tmp_path: Path) -> None:
    main = "from .utils import put\nw = put(jnp.zeros((16, 8)), mesh, P('data'))\n"
    analyzer, before = _analysis(tmp_path, main)
    assert [s.kind for s in _on_line(before, 2)] == [SiteKind.DEVICE_PUT]
    analyzer.workspace.set_text(
        str(tmp_path / "pkg" / "utils.py"),
        UTILS.replace("jax.device_put(x,", "jax.lax.with_sharding_constraint(x,"),
    )
    path = str(tmp_path / "pkg" / "main.py")
    after = analyzer.analyze(path, HEADER + main)
    assert [s.kind for s in _on_line(after, 2)] == [SiteKind.CONSTRAINT]
    assert after == Analyzer(analyzer.workspace).analyze(path, HEADER + main)
