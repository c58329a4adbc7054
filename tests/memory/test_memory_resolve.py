"""Whole-model resolution: paths, copies, stacking, branches, sizes from call sites and defaults."""

from __future__ import annotations

import textwrap

from memory_helpers import by_class, instance, static_models

from shardls.core import parse_dtype

HEADER = """
import dataclasses
import jax
import jax.numpy as jnp
from flax import nnx
"""


def models_of(body: str, mesh: str | None = "data=2,model=4", **settings: object):
    return static_models(HEADER + textwrap.dedent(body), mesh, **settings)


def test_nested_submodules_get_full_paths_and_call_site_sizes() -> None:
    models = models_of(
        """
        class MLP(nnx.Module):
            def __init__(self, d, f, *, rngs):
                self.up = nnx.Linear(d, f, rngs=rngs)
                self.down = nnx.Linear(f, d, use_bias=False, rngs=rngs)

        class Block(nnx.Module):
            def __init__(self, d, *, rngs):
                self.mlp = MLP(d, 4 * d, rngs=rngs)
                self.norm = nnx.LayerNorm(d, rngs=rngs)

        block = Block(64, rngs=nnx.Rngs(0))
        """
    )
    model = instance(models, "block")
    assert [p.path for p in model.params] == [
        "mlp.up.kernel",
        "mlp.up.bias",
        "mlp.down.kernel",
        "norm.scale",
        "norm.bias",
    ]
    assert model.param_count == 64 * 256 + 256 + 256 * 64 + 64 + 64
    assert model.total_bytes == 4 * model.param_count
    # Unannotated parameters are replicated: every device holds all of them.
    assert model.max_bytes_per_device == model.total_bytes


def test_comprehension_layers_are_counted_once_per_copy() -> None:
    models = models_of(
        """
        @dataclasses.dataclass
        class Config:
            d: int = 32
            n_layers: int = 6

        class Net(nnx.Module):
            def __init__(self, cfg: Config, *, rngs):
                self.layers = nnx.List([nnx.Linear(cfg.d, cfg.d, use_bias=False, rngs=rngs) for _ in range(cfg.n_layers)])
                self.widths = [nnx.Linear(8 * (i + 1), 8, use_bias=False, rngs=rngs) for i in range(3)]

        net = Net(Config(n_layers=80), rngs=nnx.Rngs(0))
        """
    )
    model = instance(models, "net")
    layers = model.params[0]
    assert layers.path == "layers[0..79].kernel"
    assert layers.count == 80
    assert list(layers.paths())[:2] == ["layers[0].kernel", "layers[1].kernel"]
    assert [p.path for p in model.params[1:]] == ["widths[0].kernel", "widths[1].kernel", "widths[2].kernel"]
    assert [p.shape for p in model.params[1:]] == [(8, 8), (16, 8), (24, 8)]
    assert model.param_count == 80 * 32 * 32 + (8 + 16 + 24) * 8


def test_vmap_stacking_adds_a_leading_axis_and_spec_entry() -> None:
    models = models_of(
        """
        class Block(nnx.Module):
            def __init__(self, d, rngs):
                self.up = nnx.Linear(d, 4 * d, use_bias=False,
                                     kernel_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("data", "model")), rngs=rngs)

        class Stack(nnx.Module):
            def __init__(self, d, rngs):
                @nnx.split_rngs(splits=5)
                @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
                def create(rngs):
                    return Block(d, rngs)
                self.blocks = create(rngs)

        stack = Stack(16, nnx.Rngs(0))
        """
    )
    (param,) = instance(models, "stack").params
    assert param.path == "blocks.up.kernel"
    assert param.shape == (5, 16, 64)
    assert param.spec is not None and param.spec.entries == (None, "data", "model")
    assert param.shard_shape == (5, 8, 16)


def test_undecided_branches_are_both_counted_and_said() -> None:
    models = models_of(
        """
        class Head(nnx.Module):
            def __init__(self, d, tied, rngs):
                if tied:
                    self.proj = nnx.Linear(d, d, use_bias=False, rngs=rngs)
                else:
                    self.out = nnx.Linear(d, 2 * d, use_bias=False, rngs=rngs)
        """
    )
    model = by_class(models, "Head")
    assert [p.path for p in model.params] == ["proj.kernel", "out.kernel"]
    assert any("both branches" in note for note in model.assumptions)
    assert all(p.is_symbolic for p in model.params)
    assert model.param_count == 0


def test_decided_branch_runs_alone_and_defaults_size_the_class() -> None:
    models = models_of(
        """
        class Head(nnx.Module):
            def __init__(self, d=32, tied=False, *, rngs):
                if tied:
                    self.proj = nnx.Linear(d, d, rngs=rngs)
                else:
                    self.out = nnx.Linear(d, 2 * d, use_bias=False, param_dtype=jnp.bfloat16, rngs=rngs)
        """
    )
    model = by_class(models, "Head")
    (param,) = model.params
    assert (param.path, param.shape, param.dtype.name) == ("out.kernel", (32, 64), "bfloat16")
    assert model.total_bytes == 32 * 64 * 2
    assert "no instantiation in this file: sizes from parameter defaults" in model.assumptions


def test_logical_rules_and_mesh_from_the_instantiation_context() -> None:
    models = models_of(
        """
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        class M(nnx.Module):
            def __init__(self, rngs):
                self.w = nnx.Linear(64, 128, kernel_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("embed", "mlp")), rngs=rngs)

        with jax.set_mesh(mesh), nnx.logical_axis_rules([("embed", "data"), ("mlp", "model")]):
            m = M(nnx.Rngs(0))
        """,
        mesh=None,
    )
    model = instance(models, "m")
    kernel = model.params[0]
    assert kernel.spec is not None and kernel.spec.entries == ("data", "model")
    assert kernel.logical_spec is not None and kernel.logical_spec.entries == ("embed", "mlp")
    assert kernel.shard_shape == (32, 32)
    assert model.mesh_text == "data=2,model=4"
    # The bias is replicated on all 8 devices.
    assert model.max_bytes_per_device == 32 * 32 * 4 + 128 * 4


def test_without_a_mesh_parameters_sit_on_one_device() -> None:
    models = models_of(
        """
        class M(nnx.Module):
            def __init__(self, rngs):
                self.w = nnx.Embed(100, 8, rngs=rngs)
        """,
        mesh=None,
    )
    model = by_class(models, "M")
    assert model.mesh_text is None
    assert model.max_bytes_per_device == model.total_bytes == 100 * 8 * 4
    assert "no mesh: every parameter is counted on one device" in model.assumptions


def test_dtype_setting_applies_where_param_dtype_is_not_written() -> None:
    models = models_of(
        """
        class M(nnx.Module):
            def __init__(self, rngs):
                self.a = nnx.Linear(4, 4, use_bias=False, rngs=rngs)
                self.b = nnx.Linear(4, 4, use_bias=False, param_dtype=jnp.float32, rngs=rngs)
        """,
        dtype=parse_dtype("bfloat16"),
    )
    assert [p.dtype.name for p in by_class(models, "M").params] == ["bfloat16", "float32"]


def test_70b_config_from_a_classmethod() -> None:
    models = static_models("llama.py", "fsdp=8,tp=4")
    seventy = [m for m in models if m.instantiation][1]
    assert seventy.params[1].path == "layers[0..79].attn_norm.scale"
    assert seventy.param_count == 68_976_648_192


def test_a_module_built_inside_itself_stops_there() -> None:
    models = models_of(
        """
        class Tree(nnx.Module):
            def __init__(self, rngs):
                self.kids = [Tree(rngs) for _ in range(80)]
                self.w = nnx.Linear(2, 2, use_bias=False, rngs=rngs)
        """
    )
    model = by_class(models, "Tree")
    assert [p.path for p in model.params] == ["w.kernel"]
    assert any("nested in itself" in note for note in model.assumptions)


def test_layers_of_layers_cost_the_sum_not_the_product() -> None:
    levels = "\n".join(
        f"""
        class L{n}(nnx.Module):
            def __init__(self, rngs):
                self.x = nnx.List([L{n - 1}(rngs) for _ in range(100)])
        """
        for n in range(1, 5)
    )
    models = models_of(
        """
        class L0(nnx.Module):
            def __init__(self, rngs):
                self.w = nnx.Linear(2, 3, rngs=rngs)
        """
        + levels
    )
    (kernel, bias) = by_class(models, "L4").params
    assert kernel.path == "x[0..99].x[0..99].x[0..99].x[0..99].w.kernel"
    assert kernel.count == 100**4
    assert next(kernel.paths()) == "x[0].x[0].x[0].x[0].w.kernel"
    assert by_class(models, "L4").param_count == 100**4 * (6 + 3)


def test_a_budget_bounds_loop_dependent_layers() -> None:
    models = models_of(
        """
        class Row(nnx.Module):
            def __init__(self, n, rngs):
                self.cells = [nnx.Linear(i + 1, n, use_bias=False, rngs=rngs) for i in range(1000)]

        class Grid(nnx.Module):
            def __init__(self, rngs):
                self.rows = [Row(j + 1, rngs) for j in range(1000)]
        """
    )
    grid = by_class(models, "Grid")
    assert any("the rest is not counted" in note for note in grid.assumptions)
    assert 0 < len(grid.params) <= 20_000
