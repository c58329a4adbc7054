"""Flax NNX parameter sites, statically: names, shapes (symbolic too), dtypes, spans, rule chains,
notes and diagnostics the JAX comparison (test_nnx_jax.py) cannot see."""

from __future__ import annotations

import textwrap

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import Diagnostic, FileAnalysis, Severity, Site, SiteKind, SymbolicDim
from shardls.analysis.settings import Settings

HEADER = """\
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
wp = nnx.with_partitioning
init = nnx.initializers.zeros_init()
"""


def analyze(body: str) -> FileAnalysis:
    return Analyzer().analyze("model.py", HEADER + textwrap.dedent(body))


def sites(result: FileAnalysis) -> dict[str, Site]:
    found = {s.name: s for s in result.sites if s.kind is SiteKind.PARAM and s.name}
    assert len(found) == len([s for s in result.sites if s.kind is SiteKind.PARAM]), "duplicate names"
    return found


def codes(result: FileAnalysis) -> list[str]:
    return [d.code for d in result.diagnostics]


def dtype(site: Site) -> tuple[str, str | None]:
    """The dtype on device, and the one written when JAX narrows it (no x64)."""
    assert site.dtype is not None
    return site.dtype.name, site.dtype.requested


def only(result: FileAnalysis, code: str) -> Diagnostic:
    found = [d for d in result.diagnostics if d.code == code]
    assert len(found) == 1, result.diagnostics
    return found[0]


def test_unknown_sizes_stay_symbolic_and_unseen_callers_raise_nothing() -> None:
    result = analyze(
        """
        class MLP(nnx.Module):
            def __init__(self, d_model: int, rngs: nnx.Rngs):
                self.up = nnx.Linear(d_model, 4 * d_model, kernel_init=wp(init, (None, "model")), rngs=rngs)
        """
    )
    up = sites(result)["up.kernel"]
    assert up.shape == (SymbolicDim("d_model"), SymbolicDim("4*d_model"))
    assert up.shard_shape == (SymbolicDim("d_model"), SymbolicDim("4*d_model/4"))
    assert "SH201" not in codes(result)  # MLP may be built under a mesh somewhere else
    assert any("no call of this code" in note for note in up.assumptions)


@pytest.mark.parametrize(("built", "expected"), [("", []), ("block = Block(64, nnx.Rngs(0))\n", ["SH201"])])
def test_a_submodule_of_a_module_with_unseen_callers_raises_nothing(built: str, expected: list[str]) -> None:
    """`Attention(...)` called in `Block.__init__` has a visible call, but Block's own caller is in
    another file (where the mesh is set): only a module-level chain without a mesh is a mistake."""
    result = analyze(
        """
        class Attention(nnx.Module):
            def __init__(self, d: int, rngs: nnx.Rngs):
                self.q = nnx.Linear(d, d, kernel_init=wp(init, (None, "model")), rngs=rngs)


        class Block(nnx.Module):
            def __init__(self, d: int, rngs: nnx.Rngs):
                self.attn = Attention(d, rngs)
        """
        + built
    )
    assert [code for code in codes(result) if code == "SH201"] == expected


def test_param_dtype_defaults_to_float32_and_float64_narrows_without_x64() -> None:
    result = analyze(
        """
        with jax.set_mesh(mesh):
            a = nnx.Linear(8, 16, kernel_init=wp(init, ("data",)), rngs=nnx.Rngs(0))
            b = nnx.Linear(8, 16, kernel_init=wp(init, ("data",)), param_dtype=jnp.bfloat16, rngs=nnx.Rngs(0))
            c = nnx.Linear(8, 16, kernel_init=wp(init, ("data",)), param_dtype="float64", rngs=nnx.Rngs(0))
            d = nnx.Param(jnp.zeros((8, 4), jnp.int8), out_sharding=P("data"))
        """
    )
    found = sites(result)
    assert [dtype(found[n]) for n in ("a.kernel", "b.kernel", "c.kernel", "d")] == [
        ("float32", None),
        ("bfloat16", None),
        ("float32", "float64"),
        ("int8", None),
    ]
    assert found["b.kernel"].bytes_per_device == 4 * 16 * 2


def test_float64_params_stay_64_bit_with_x64() -> None:
    body = """
        with jax.set_mesh(mesh):
            c = nnx.Linear(8, 16, kernel_init=wp(init, ("data",)), param_dtype=jnp.float64, rngs=nnx.Rngs(0))
        """
    result = Analyzer().analyze("model.py", HEADER + textwrap.dedent(body), Settings(x64=True))
    assert dtype(sites(result)["c.kernel"]) == ("float64", None)


def test_names_of_lists_of_layers() -> None:
    result = analyze(
        """
        class Tower(nnx.Module):
            def __init__(self, widths, rngs):
                self.same = [nnx.Linear(8, 8, kernel_init=wp(init, ("data",)), rngs=rngs) for _ in range(4)]
                self.sized = nnx.List(
                    [nnx.Linear(widths[i], widths[i + 1], kernel_init=wp(init, ("data",)), rngs=rngs) for i in range(2)]
                )
                self.pair = [nnx.Linear(8, 4, kernel_init=wp(init, ("data",)), rngs=rngs), nnx.RMSNorm(8, scale_init=wp(init, ("model",)), rngs=rngs)]

        with jax.set_mesh(mesh):
            tower = Tower((64, 32, 16), nnx.Rngs(0))
        """
    )
    found = sites(result)
    assert set(found) == {
        "same[*].kernel",
        "sized[0].kernel",
        "sized[1].kernel",
        "pair[0].kernel",
        "pair[1].scale",
    }
    assert found["sized[0].kernel"].shape == (64, 32)
    assert found["sized[1].kernel"].shape == (32, 16)
    assert any("Tower(...) at line" in note for note in found["sized[1].kernel"].assumptions)


def test_config_fields_and_keyword_arguments() -> None:
    result = analyze(
        """
        import dataclasses

        @dataclasses.dataclass
        class Config:
            heads: int = 8
            dim: int = 256
            kv_heads: int = 2

        class Block(nnx.Module):
            def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
                self.attn = nnx.MultiHeadAttention(
                    num_heads=cfg.heads, in_features=cfg.dim, num_kv_heads=cfg.kv_heads, use_bias=False,
                    kernel_init=wp(init, ("data", "model", None)), rngs=rngs,
                )

        with jax.set_mesh(mesh):
            block = Block(Config(dim=512), rngs=nnx.Rngs(0))
        """
    )
    found = sites(result)
    assert found["attn.query.kernel"].shape == (512, 8, 64)
    assert found["attn.key.kernel"].shape == (512, 2, 64)
    assert found["attn.key.kernel"].shard_shape is None  # 2 kv heads over 'model' (4): indivisible
    assert found["attn.out.kernel"].shape == (8, 64, 512)
    assert "SH001" in codes(result)


def test_deprecated_keyword_points_at_the_name_with_fix_data() -> None:
    result = analyze(
        """
        with jax.set_mesh(mesh):
            w = nnx.Param(jnp.zeros((8, 4)), sharding=("data", None))
        """
    )
    diagnostic = only(result, "SH204")
    line = HEADER.count("\n") + 2
    assert (diagnostic.span.line, diagnostic.span.end_column - diagnostic.span.column) == (
        line,
        len("sharding"),
    )
    assert diagnostic.deprecated
    assert diagnostic.data["replacement"] == "out_sharding"
    assert sites(result)["w"].shard_shape == (4, 4)


def test_deprecated_metadata_key_points_inside_the_quotes() -> None:
    body = """
        with jax.set_mesh(mesh):
            old = nnx.Linear(8, 16, kernel_metadata={"sharding_names": ("data", None)}, rngs=nnx.Rngs(0))
        """
    diagnostic = only(analyze(body), "SH204")
    line = (HEADER + textwrap.dedent(body)).split("\n")[diagnostic.span.line]
    assert line[diagnostic.span.column : diagnostic.span.end_column] == "sharding_names"
    assert diagnostic.data["deprecated"] == "sharding_names"


def test_annotation_entries_are_underlined_where_written() -> None:
    body = """
        with jax.set_mesh(mesh):
            bad = nnx.Linear(10, 16, kernel_init=wp(init, ("model", None)), rngs=nnx.Rngs(0))
        """
    diagnostic = only(analyze(body), "SH001")
    line = (HEADER + textwrap.dedent(body)).split("\n")[diagnostic.span.line]
    assert line[diagnostic.span.column : diagnostic.span.end_column] == '"model"'


def test_one_mesh_error_per_layer_with_a_layout_on_the_file_mesh() -> None:
    result = analyze(
        """
        dense = nnx.Linear(16, 32, kernel_init=wp(init, ("data", "model")), bias_init=wp(init, ("model",)), rngs=nnx.Rngs(0))
        """
    )
    assert codes(result) == ["SH201"]
    assert "An auto mesh context or metadata is required" in result.diagnostics[0].message
    kernel = sites(result)["dense.kernel"]
    assert kernel.shard_shape == (8, 8)
    assert kernel.mesh is not None and kernel.mesh.selection == "the only mesh in this file"
    assert any("Flax raises" in note for note in kernel.assumptions)


def test_lazy_parameters_need_no_mesh() -> None:
    result = analyze(
        """
        lazy = nnx.Param(jnp.zeros((16, 8)), out_sharding=("data", None), eager_sharding=False)
        """
    )
    assert codes(result) == []
    assert any("eager_sharding=False" in note for note in sites(result)["lazy"].assumptions)


def test_rule_chain_and_logical_spec() -> None:
    result = analyze(
        """
        rules = (("embed", "data"), ("mlp", ("model",)))
        with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
            up = nnx.Linear(64, 256, kernel_init=wp(init, ("embed", "mlp")), rngs=nnx.Rngs(0))
        """
    )
    up = sites(result)["up.kernel"]
    assert up.spec is not None and up.spec.canonical() == "P('data', 'model')"
    assert up.logical_spec is not None and up.logical_spec.canonical() == "P('embed', 'mlp')"
    assert [step.rsplit(" (", 1)[0] for step in up.rule_chain] == ["embed → data", "mlp → ('model',)"]
    assert "nnx.logical_axis_rules" in up.rule_chain[0]


def test_unreadable_rules_leave_logical_entries_unknown() -> None:
    result = analyze(
        """
        from config import RULES

        with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
            up = nnx.Linear(64, 256, kernel_init=wp(init, ("embed", "model")), rngs=nnx.Rngs(0))
        """
    )
    up = sites(result)["up.kernel"]
    assert codes(result) == []
    assert up.shard_shape == (64, 64)
    assert any("entry 0 unknown" in note for note in up.assumptions)


def test_unmapped_logical_name_is_reported_once() -> None:
    result = analyze(
        """
        with jax.set_mesh(mesh), nnx.logical_axis_rules([("embed", "data")]):
            up = nnx.Linear(64, 256, kernel_init=wp(init, ("embed", "mlp")), rngs=nnx.Rngs(0))
        """
    )
    diagnostic = only(result, "SH205")
    assert "SH005" not in codes(result)
    assert "Resource axis: mlp of P('data', 'mlp') is not found in mesh" in diagnostic.message
    assert diagnostic.data["axes"] == ["mlp"]


def test_conditional_annotations_give_one_site_each() -> None:
    result = analyze(
        """
        def build(fsdp):
            spec = ("data", "model") if fsdp else (None, "model")
            with jax.set_mesh(mesh):
                return nnx.Linear(64, 256, kernel_init=wp(init, spec), rngs=nnx.Rngs(0))
        """
    )
    shards = {s.shard_shape for s in result.sites if s.kind is SiteKind.PARAM}
    assert shards == {(32, 64), (64, 64)}


def test_stack_size_is_symbolic_without_a_visible_call() -> None:
    result = analyze(
        """
        @nnx.vmap(transform_metadata={nnx.PARTITION_NAME: None})
        def create(rngs):
            return nnx.Linear(16, 32, kernel_init=wp(init, ("data", "model")), rngs=rngs)
        """
    )
    kernel = sites(result)["kernel"]
    assert kernel.shape == (SymbolicDim("num_layers"), 16, 32)
    assert kernel.spec is not None and kernel.spec.canonical() == "P(None, 'data', 'model')"


@pytest.mark.parametrize(
    ("split", "size"),
    [
        ("nnx.Rngs(0).fork(split=5)", 5),
        ("nnx.Rngs(0).split(3)", 3),
        ("jax.random.split(jax.random.key(0), 7)", 7),
        ("jax.random.split(jax.random.PRNGKey(0), 2)", 2),
    ],
)
def test_stack_size_from_the_split(split: str, size: int) -> None:
    result = analyze(
        f"""
        @nnx.vmap(in_axes=0, transform_metadata={{nnx.PARTITION_NAME: "data"}})
        def create(key):
            return nnx.Linear(16, 32, kernel_init=wp(init, (None, "model")), rngs=key)

        with jax.set_mesh(mesh):
            stack = create({split})
        """
    )
    kernel = sites(result)["kernel"]
    assert kernel.shape == (size, 16, 32)
    assert kernel.spec is not None and kernel.spec.canonical() == "P('data', None, 'model')"


def test_nested_vmaps_stack_outermost_first() -> None:
    result = analyze(
        """
        @nnx.split_rngs(splits=2)
        @nnx.vmap(transform_metadata={nnx.PARTITION_NAME: "data"})
        def outer(rngs):
            return inner(rngs)

        @nnx.split_rngs(splits=3)
        @nnx.vmap(transform_metadata={nnx.PARTITION_NAME: None})
        def inner(rngs):
            return nnx.Linear(16, 32, kernel_init=wp(init, (None, "model")), rngs=rngs)

        with jax.set_mesh(mesh):
            grid = outer(nnx.Rngs(0))
        """
    )
    kernel = sites(result)["kernel"]
    assert kernel.shape == (2, 3, 16, 32)
    assert kernel.spec is not None and kernel.spec.canonical() == "P('data', None, None, 'model')"


def test_missing_transform_metadata_is_reported_at_the_vmap() -> None:
    result = analyze(
        """
        @nnx.vmap(in_axes=0)
        def create(rngs):
            norm = nnx.LayerNorm(32, scale_init=wp(init, ("model",)), bias_init=wp(init, ("model",)), rngs=rngs)
            return nnx.Linear(16, 32, kernel_init=wp(init, (None, "model")), rngs=rngs), norm

        with jax.set_mesh(mesh):
            stack = create(nnx.Rngs(0).fork(split=4))
        """
    )
    diagnostic = only(result, "SH208")
    assert diagnostic.span.line == HEADER.count("\n") + 1
    kernel = sites(result)["kernel"]
    assert kernel.shape == (4, 16, 32) and kernel.shard_shape == (4, 4, 32)  # the wrong dimension


def test_transform_metadata_below_a_vmap_is_not_reported_as_missing() -> None:
    """flax tests/nnx/transforms_test.py: `@nnx.transform_metadata(partition=...)` under
    `@nnx.vmap` gives the annotation its stacked entry (Flax 0.12.8: `('c', 'a', 'b')`), so
    nothing is missing; shardls does not model it, so the stacked entry stays unknown."""
    result = analyze(
        """
        @nnx.vmap(in_axes=(None,), out_axes=0, axis_size=4)
        @nnx.transform_metadata(in_axes=(None,), out_axes=0, partition="data")
        def create(rngs):
            return nnx.Linear(16, 32, kernel_init=wp(init, (None, "model")), rngs=rngs)

        with jax.set_mesh(mesh):
            stack = create(nnx.Rngs(0))
        """
    )
    assert [d.code for d in result.diagnostics if d.code == "SH208"] == []
    assert all(d.severity is not Severity.ERROR for d in result.diagnostics)


def test_layers_of_every_kind_have_their_parameters() -> None:
    result = analyze(
        """
        with jax.set_mesh(mesh):
            ln = nnx.LayerNorm(32, scale_metadata={"out_sharding": ("model",)}, use_bias=False, rngs=nnx.Rngs(0))
            gn = nnx.GroupNorm(32, num_groups=4, bias_metadata={"out_sharding": ("data",)}, rngs=nnx.Rngs(0))
            bn = nnx.BatchNorm(32, scale_metadata={"out_sharding": ("data",)}, rngs=nnx.Rngs(0))
            conv = nnx.Conv(4, 8, kernel_size=(3, 3, 3), use_bias=False, kernel_metadata={"out_sharding": P(None, None, None, None, "model")}, rngs=nnx.Rngs(0))
            mha = nnx.MultiHeadAttention(4, 32, qkv_features=64, out_features=16, normalize_qk=True,
                query_ln_scale_metadata={"out_sharding": ("model",)}, out_bias_metadata={"out_sharding": ("data",)},
                rngs=nnx.Rngs(0))
        """
    )
    found = sites(result)
    assert {n: found[n].shape for n in found} == {
        "ln.scale": (32,),
        "gn.bias": (32,),
        "bn.scale": (32,),
        "conv.kernel": (3, 3, 3, 4, 8),
        "mha.query_ln.scale": (16,),
        "mha.out.bias": (16,),
    }
