"""A NamedSharding built on its own answers with the arrays it meets (issue #12).

`sharding = NamedSharding(mesh, P("data"))` has no array; the placements that use it do. Its
site lists them (`Site.uses`) and takes their shape when every use whose shape is known agrees
on it; a use of unknown shape adds nothing, uses that differ leave the shape unknown, and an
assumption a use rests on stays named.
"""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze, line_of, workspace

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.analysis.settings import Settings
from shardls.core import Severity

EIGHT = Settings(device_count=8, device_count_source="--device-count")

HEADER = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
"""


def built(analysis: FileAnalysis, line: int) -> list[Site]:
    """The named_sharding sites of a 0-based line."""
    return [s for s in analysis.sites if s.kind is SiteKind.NAMED_SHARDING and s.span.line == line]


def the_one(analysis: FileAnalysis, line: int) -> Site:
    found = built(analysis, line)
    assert len(found) == 1, found
    return found[0]


def uses(site: Site) -> list[tuple[str | None, int]]:
    return [(use.name, use.span.line) for use in site.uses]


def test_a_sharding_takes_the_shape_its_uses_agree_on() -> None:
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "losses = jax.device_put(jnp.ones((4, 2, 4)), sharding)\n"
        "masks = jax.device_put(jnp.zeros((4, 2, 4)), sharding)\n"
    )
    analysis = analyze(source, EIGHT)
    site = the_one(analysis, line_of(source, "sharding = "))

    assert uses(site) == [("losses", line_of(source, "losses =")), ("masks", line_of(source, "masks ="))]
    assert site.shape == (4, 2, 4)
    assert site.shard_shape == (1, 2, 4)
    assert site.dtype is not None and site.dtype.name == "float32"
    assert site.bytes_per_device == 32
    assert all(use.sharding_span == site.span for use in site.uses)
    assert not analysis.diagnostics


def test_uses_of_different_shapes_leave_the_shape_unknown_and_list_them() -> None:
    source = HEADER + (
        "sharding = NamedSharding(mesh, P(None, 'model'))\n"
        "inputs = jax.device_put(jnp.ones((2, 2, 2)), sharding)\n"
        "labels = jax.device_put(jnp.ones((2, 4, 1)), sharding)\n"
    )
    site = the_one(analyze(source, EIGHT), line_of(source, "sharding = "))

    assert [use.name for use in site.uses] == ["inputs", "labels"]
    assert [use.shard_shape for use in site.uses] == [(2, 1, 2), (2, 2, 1)]
    assert site.shape is None and site.shard_shape is None and site.layout is None


def test_uses_of_one_shape_in_different_dtypes_leave_the_shape_unknown() -> None:
    """The bytes per device differ, so there is no one layout to give the sharding."""
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "a = jax.device_put(jnp.ones((8, 4)), sharding)\n"
        "b = jax.device_put(jnp.ones((8, 4), jnp.int8), sharding)\n"
    )
    site = the_one(analyze(source, EIGHT), line_of(source, "sharding = "))

    assert len(site.uses) == 2
    assert site.shape is None and site.bytes_per_device is None


def test_a_use_whose_shape_is_not_known_adds_nothing() -> None:
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "known = jax.device_put(jnp.ones((8, 4)), sharding)\n"
        "\n"
        "def put(batch):\n"
        "    return jax.device_put(batch, sharding)\n"
    )
    site = the_one(analyze(source, EIGHT), line_of(source, "sharding = "))

    assert [(use.name, use.shape) for use in site.uses] == [("known", (8, 4)), ("batch", None)]
    assert site.shape == (8, 4)
    assert site.shard_shape == (2, 4)


def test_no_use_of_known_shape_leaves_the_shape_unknown() -> None:
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "\n"
        "def put(batch):\n"
        "    return jax.device_put(batch, sharding)\n"
    )
    site = the_one(analyze(source, EIGHT), line_of(source, "sharding = "))

    assert [use.name for use in site.uses] == ["batch"]
    assert site.shape is None and site.shard_shape is None


def test_a_sharding_nobody_uses_keeps_no_shape() -> None:
    source = HEADER + "sharding = NamedSharding(mesh, P('data'))\n"
    site = the_one(analyze(source, EIGHT), line_of(source, "sharding = "))

    assert site.uses == () and site.shape is None


def test_each_call_of_a_helper_is_its_own_sharding() -> None:
    """flax tests/nnx/transforms_test.py: `def sharding(*args): return NamedSharding(mesh, P(*args))`."""
    source = HEADER + (
        "def sharding(*args):\n"
        "    return NamedSharding(mesh, P(*args))\n"
        "\n"
        "kernel = jax.device_put(jnp.ones((16, 32)), sharding('data', 'model'))\n"
        "bias = jax.device_put(jnp.ones((32,)), sharding('model'))\n"
    )
    analysis = analyze(source, EIGHT)
    sites = built(analysis, line_of(source, "return NamedSharding"))

    by_use = {site.uses[0].name: site for site in sites if site.uses}
    assert sorted(by_use) == ["bias", "kernel"] and all(len(s.uses) == 1 for s in sites)
    assert by_use["kernel"].shape == (16, 32) and by_use["kernel"].shard_shape == (4, 16)
    assert by_use["bias"].shape == (32,) and by_use["bias"].shard_shape == (16,)
    assert any("sharding(...) at line" in note for note in by_use["kernel"].assumptions)


def test_every_placement_with_a_sharding_is_a_use() -> None:
    """device_put, constraints, reshard, jit in/out shardings at a call, callbacks, ShapeDtypeStruct."""
    source = HEADER + (
        "batch = NamedSharding(mesh, P('data', None))\n"
        "host = np.zeros((8, 6), np.float32)\n"
        "\n"
        "def double(x):\n"
        "    return x * 2\n"
        "\n"
        "step = jax.jit(double, in_shardings=batch, out_shardings=batch)\n"
        "doubled = step(jnp.ones((8, 6)))\n"
        "made = jax.make_array_from_callback((8, 6), batch, lambda index: host[index])\n"
        "abstract = jax.ShapeDtypeStruct((8, 6), jnp.float32, sharding=batch)\n"
        "\n"
        "@jax.jit\n"
        "def constrained(y):\n"
        "    return jax.lax.with_sharding_constraint(y * 2, batch)\n"
        "\n"
        "out = constrained(jnp.ones((8, 6)))\n"
    )
    site = the_one(analyze(source, EIGHT), line_of(source, "batch = "))

    kinds = {use.kind for use in site.uses if use.shape is not None}
    assert kinds == {
        SiteKind.JIT_IN,
        SiteKind.JIT_OUT,
        SiteKind.CREATION,
        SiteKind.SHAPE_DTYPE_STRUCT,
        SiteKind.CONSTRAINT,
    }
    assert site.shape == (8, 6) and site.shard_shape == (2, 6)


def test_an_assumption_a_use_rests_on_stays_named() -> None:
    """A dimension computed from the default device count: the sharding's shape rests on it too."""
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\n"
        "x = jax.device_put(jnp.ones((jax.device_count() * 2, 4)), sharding)\n"
    )
    analysis = analyze(source)
    site = the_one(analysis, line_of(source, "sharding = "))
    use = site.uses[0]

    assert site.shape == use.shape == (16, 4)
    assert site.assumptions
    assert set(use.assumptions) <= set(site.assumptions)
    assert any("default device count" in note for note in site.assumptions)


def test_a_rejected_use_is_reported_once_where_jax_raises() -> None:
    """The sharding's site shows the layout JAX rejects; the error stays at the use."""
    source = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\nodd = jax.device_put(jnp.ones((9, 4)), sharding)\n"
    )
    analysis = analyze(source, EIGHT)
    site = the_one(analysis, line_of(source, "sharding = "))

    assert site.shape == (9, 4) and site.shard_shape is None
    errors = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert [(d.code, d.span.line) for d in errors] == [("SH001", line_of(source, "odd ="))]


def test_a_sharding_built_in_another_module_is_not_attributed_here(tmp_path: Path) -> None:
    analyzer = workspace(
        tmp_path,
        {
            "shardings.py": HEADER + "BATCH = NamedSharding(mesh, P('data'))\n",
            "train.py": "import jax\nimport jax.numpy as jnp\nfrom shardings import BATCH\n"
            "x = jax.device_put(jnp.ones((8, 4)), BATCH)\n",
        },
    )
    train = analyzer.analyze(str(tmp_path / "train.py"), (tmp_path / "train.py").read_text(), EIGHT)
    shardings = analyzer.analyze(
        str(tmp_path / "shardings.py"), (tmp_path / "shardings.py").read_text(), EIGHT
    )

    placed = [s for s in train.sites if s.name == "x"]
    assert placed and placed[0].shard_shape == (2, 4) and placed[0].sharding_span is None
    assert [s.uses for s in shardings.sites if s.kind is SiteKind.NAMED_SHARDING] == [()]


def test_an_edited_use_changes_the_sharding_site() -> None:
    """Sites are cached per statement; the uses are joined for the whole file on each analysis."""
    analyzer = Analyzer()
    before = HEADER + (
        "sharding = NamedSharding(mesh, P('data'))\nx = jax.device_put(jnp.ones((8, 4)), sharding)\n"
    )
    after = before.replace("(8, 4)", "(16, 4)")
    line = line_of(before, "sharding = ")

    first = the_one(analyzer.analyze("/virtual/model.py", before, EIGHT), line)
    second = the_one(analyzer.analyze("/virtual/model.py", after, EIGHT), line)

    assert first.shape == (8, 4) and second.shape == (16, 4)
    assert second.shard_shape == (4, 4)
