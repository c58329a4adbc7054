"""Per-device shapes as formulas when sizes or the mesh are not known here, in text and JSON, and
the answer for a spec no site uses."""

from __future__ import annotations

import textwrap

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site
from shardls.cli.output.json_format import layout_json
from shardls.core import PartitionSpec
from shardls.render.inlay import shard_label
from shardls.render.site_text import (
    describe_lone_spec,
    describe_site,
    layout_summary,
    per_device_type,
    requirements,
    shard_formula,
)
from shardls.server.spec_call import spec_call_at

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
"""


def _analyze(body: str) -> FileAnalysis:
    return Analyzer().analyze("/virtual/model.py", HEADER + textwrap.dedent(body))


def _site(body: str) -> Site:
    return _analyze(body).sites[0]


UNKNOWN_MESH = """
def shard(x, mesh):
    b, s, d = x.shape
    return jax.device_put(x, NamedSharding(mesh, P("data", None, ("fsdp", "model"))))
"""


def test_an_unknown_mesh_gives_formulas_with_axis_sizes_by_name() -> None:
    site = _site(UNKNOWN_MESH)
    assert shard_formula(site) == ["b/|data|", "s", "d/(|fsdp|*|model|)"]
    assert per_device_type(site) == "float32[b/|data|,s,d/(|fsdp|*|model|)]"
    assert layout_summary(site) == (
        "device_put x: float32[b@data,s,d@(fsdp,model)] → per device "
        "float32[b/|data|,s,d/(|fsdp|*|model|)] (no mesh known here; 2 divisibilities to check)"
    )
    assert requirements(site) == [
        "dim 0 (b) must be divisible by the size of data",
        "dim 2 (d) must be divisible by the product of the sizes of fsdp × model",
    ]


def test_the_json_keeps_unknown_sizes_null_beside_the_formulas() -> None:
    entry = layout_json(_site(UNKNOWN_MESH))
    assert entry["global_shape"] == [None, None, None]
    assert entry["global_formula"] == ["b", "s", "d"]
    assert entry["shard_shape"] == [None, None, None]
    assert entry["shard_formula"] == ["b/|data|", "s", "d/(|fsdp|*|model|)"]
    assert entry["mesh"] is None and entry["bytes_per_device"] is None and entry["min_rank"] is None
    assert entry["requires"] == [
        {"dim": 0, "size": None, "formula": "b", "axes": ["data"], "factor": None},
        {"dim": 2, "size": None, "formula": "d", "axes": ["fsdp", "model"], "factor": None},
    ]


def test_known_sizes_on_an_unknown_mesh_are_numbers_where_unsplit() -> None:
    site = _site(
        """
def put(mesh):
    return jax.device_put(jnp.zeros((64, 128)), NamedSharding(mesh, P(None, "model")))
"""
    )
    entry = layout_json(site)
    assert entry["shard_shape"] == [64, None]
    assert entry["shard_formula"] == ["64", "128/|model|"]
    assert entry["requires"] == [{"dim": 1, "size": 128, "formula": "128", "axes": ["model"], "factor": None}]
    assert not _analyze(
        "def put(mesh):\n    return jax.device_put(jnp.zeros((63, 128)), NamedSharding(mesh, P('model')))\n"
    ).diagnostics


def test_a_known_mesh_with_a_symbolic_size_divides_by_the_number() -> None:
    site = _site(
        """
mesh = jax.make_mesh((2, 4), ("data", "model"))
def f(n):
    return jax.device_put(jnp.zeros((n, 16)), NamedSharding(mesh, P("data", "model")))
"""
    )
    assert shard_formula(site) == ["n/2", "4"]
    assert requirements(site) == ["dim 0 (n) must be divisible by 2"]
    assert layout_json(site)["shard_shape"] == [None, 4]


def test_an_unknown_rank_is_bounded_by_the_spec_never_taken_from_it() -> None:
    site = _site(
        """
def put(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P("data", None)))
"""
    )
    assert site.shape is None and shard_formula(site) is None
    entry = layout_json(site)
    assert (entry["global_shape"], entry["shard_shape"], entry["min_rank"]) == (None, None, 2)
    assert "rank ≥ 2" in describe_site(site)[0]


def test_a_spec_no_site_uses_still_gets_its_own_answer() -> None:
    lines = describe_lone_spec(
        'P(("data",), None, "model")', PartitionSpec.of(("data",), None, "model"), (), markdown=False
    )
    assert lines[0].startswith('P(("data",), None, "model")  (no array meets this spec')
    assert lines[1] == "normalised: P('data', None, 'model')"
    assert lines[2] == "fits arrays of rank ≥ 3; splits dim 0 over data, dim 2 over model"
    assert lines[3] == "mesh: not known here: this file builds none"
    assert lines[4].startswith("shape: not known here")


def test_the_spec_call_under_the_cursor_is_the_innermost_one() -> None:
    text = 'in_specs=(P("a", None), NamedSharding(mesh, P(("b",), unreduced={"c"})))  # P(x)'
    first = spec_call_at([text], 0, text.index('"a"'))
    assert first is not None and first.text == 'P("a", None)'
    assert first.spec is not None and first.spec.entries == ("a", None)
    inner = spec_call_at([text], 0, text.index('("b"'))
    assert inner is not None and inner.spec is not None
    assert (inner.spec.entries, inner.spec.unreduced) == (("b",), frozenset({"c"}))
    outer = spec_call_at([text], 0, text.index("mesh"))
    assert outer is not None and outer.text.startswith("NamedSharding(")
    assert outer.spec is not None and outer.spec.entries == ("b",)
    assert spec_call_at([text], 0, text.index("(x)")) is None


def test_a_spec_call_over_several_lines_and_with_unknown_entries() -> None:
    lines = ["spec = P(", '    "data",  # batch', "    name,", ")"]
    found = spec_call_at(lines, 2, 6)
    assert found is not None and found.span.line == 0 and found.span.end_line == 3
    assert found.spec is None


def test_a_hover_says_why_the_shape_is_not_known() -> None:
    site = _site(
        """
def put(x, mesh):
    return jax.device_put(x, NamedSharding(mesh, P("data", None)))
"""
    )
    assert site.shape_reason == "parameter 'x'"
    assert describe_site(site)[1] == "shape: not known here (parameter 'x')"


def test_an_inlay_hint_shows_the_formula_when_no_mesh_is_known() -> None:
    assert shard_label([_site(UNKNOWN_MESH)]) == "→ [b/|data|, s, d/(|fsdp|*|model|)]"
    known = _site(
        """
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data")))
"""
    )
    assert shard_label([known]) == "→ [4, 16] ×4"


ASSUMED_COUNT = """
mesh = jax.make_mesh((jax.device_count(),), P("x"))
k = jax.device_put(jnp.zeros((128, 4, 16)), NamedSharding(mesh, P(None, "x", None)))
"""


def test_a_layout_rejected_only_on_the_assumed_device_count_stays_a_formula() -> None:
    analysis = _analyze(ASSUMED_COUNT)
    (site,) = analysis.sites
    assert site.rejected_by_assumed_sizes
    assert shard_formula(site) == ["128", "4/|x|", "16"]
    assert layout_summary(site) == (
        "device_put k: float32[128,4@x,16] → per device float32[128,4/|x|,16] "
        "(JAX rejects it with the assumed mesh sizes, x=8: SH001)"
    )
    assert requirements(site) == ["dim 1 (size 4) must be divisible by the size of x"]
    entry = layout_json(site)
    assert entry["shard_shape"] == [128, None, 16]
    assert entry["bytes_per_device"] is None
    # The problem itself is still said, as the warning that names the assumption.
    (warning,) = analysis.diagnostics
    assert (warning.code, warning.severity.value) == ("SH001", "warning")
    assert "default device count" in warning.message


def test_a_stated_device_count_makes_the_rejection_certain() -> None:
    site = _site("# shardls: device-count=8\n" + ASSUMED_COUNT)
    assert not site.rejected_by_assumed_sizes
    assert shard_formula(site) is None
    assert layout_summary(site) == "device_put k: float32[128,4@x,16] → rejected by JAX (SH001)"


def test_a_rejection_that_no_mesh_size_can_lift_stays_a_rejection() -> None:
    site = _site(
        """
mesh = jax.make_mesh((jax.device_count(),), ("x",))
k = jax.device_put(jnp.zeros((128,)), NamedSharding(mesh, P(None, "x")))
"""
    )
    assert not site.rejected_by_assumed_sizes
    assert shard_formula(site) is None


def test_a_layout_rejected_on_a_mesh_shardls_chose_stays_a_formula() -> None:
    analysis = _analyze(
        """
mesh = jax.make_mesh((2,), ("x",))
def put(m):
    return jax.device_put(jnp.zeros((128, 3)), NamedSharding(m, P(None, "x")))
"""
    )
    (site,) = analysis.sites
    assert site.mesh is not None and site.mesh.fallback
    assert shard_formula(site) == ["128", "3/|x|"]
    assert "JAX rejects it with the mesh shardls chose, x=2: SH001" in layout_summary(site)
    # A mesh shardls chose decides no problem (SH107 only says 2 of the 8 devices are used).
    assert [d.code for d in analysis.diagnostics] == ["SH107"]
