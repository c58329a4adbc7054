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
    assert any("not counted" in note for note in grid.assumptions)
    assert 0 < len(grid.params) <= 20_000


def test_layers_appended_in_loops_are_items_like_a_comprehension_s() -> None:
    models = models_of(
        """
        class Block(nnx.Module):
            def __init__(self, d, rngs):
                self.up = nnx.Linear(d, 2 * d, use_bias=False, rngs=rngs)

        class Net(nnx.Module):
            def __init__(self, n, dims, rngs):
                self.layers = nnx.List()
                for _ in range(n):
                    self.layers.append(Block(8, rngs))
                adapters = []
                for i, d in enumerate(dims):
                    adapters.append(nnx.Linear(d, i + 1, use_bias=False, rngs=rngs))
                self.adapters = nnx.List(adapters)
                self.heads = nnx.List()
                self.heads.extend([nnx.Linear(4, 4, use_bias=False, rngs=rngs) for _ in range(2)])
                self.heads += [nnx.Embed(10, 4, rngs=rngs)]
                for i in range(2):
                    setattr(self, f"proj_{i}", nnx.Linear(4, 4 * (i + 1), use_bias=False, rngs=rngs))

        net = Net(80, (16, 32, 48), nnx.Rngs(0))
        """
    )
    model = instance(models, "net")
    assert [(p.path, p.shape, p.count) for p in model.params] == [
        ("layers[0..79].up.kernel", (8, 16), 80),
        ("adapters[0].kernel", (16, 1), 1),
        ("adapters[1].kernel", (32, 2), 1),
        ("adapters[2].kernel", (48, 3), 1),
        ("heads[0..1].kernel", (4, 4), 2),
        ("heads[2].embedding", (10, 4), 1),
        ("proj_0.kernel", (4, 4), 1),
        ("proj_1.kernel", (4, 8), 1),
    ]
    assert list(model.params[0].paths())[:2] == ["layers[0].up.kernel", "layers[1].up.kernel"]
    assert model.param_count == 80 * 128 + 16 + 64 + 144 + 2 * 16 + 40 + 16 + 32
    assert not any("not known" in note for note in model.assumptions)


def test_loop_bodies_pass_values_to_the_next_iteration_and_nest() -> None:
    models = models_of(
        """
        class Net(nnx.Module):
            def __init__(self, rngs):
                mlp = []
                d = 8
                for _ in range(3):
                    mlp.append(nnx.Linear(d, 2 * d, use_bias=False, rngs=rngs))
                    d = 2 * d
                self.mlp = nnx.Sequential(*mlp)
                self.out = nnx.Linear(d, 1, use_bias=False, rngs=rngs)
                self.grid = nnx.List()
                for _ in range(2):
                    row = nnx.List()
                    for j in range(3):
                        row.append(nnx.Linear(j + 1, 2, use_bias=False, rngs=rngs))
                    self.grid.append(row)
        """
    )
    model = by_class(models, "Net")
    assert [(p.path, p.shape, p.count) for p in model.params] == [
        ("mlp.layers[0].kernel", (8, 16), 1),
        ("mlp.layers[1].kernel", (16, 32), 1),
        ("mlp.layers[2].kernel", (32, 64), 1),
        ("out.kernel", (64, 1), 1),
        ("grid[0..1][0].kernel", (1, 2), 2),
        ("grid[0..1][1].kernel", (2, 2), 2),
        ("grid[0..1][2].kernel", (3, 2), 2),
    ]
    assert list(model.params[4].paths()) == ["grid[0][0].kernel", "grid[1][0].kernel"]


def test_loops_are_bounded_and_identical_iterations_resolve_once() -> None:
    models = models_of(
        """
        class Block(nnx.Module):
            def __init__(self, rngs):
                self.a = nnx.Linear(4, 4, use_bias=False, rngs=rngs)
                self.b = nnx.Linear(4, 4, use_bias=False, rngs=rngs)
                self.c = nnx.Linear(4, 4, use_bias=False, rngs=rngs)

        class Deep(nnx.Module):
            def __init__(self, n, rngs):
                self.unknown = nnx.List()
                for _ in range(n):
                    self.unknown.append(nnx.Linear(4, 4, use_bias=False, rngs=rngs))
                self.wide = nnx.List()
                for i in range(2000):
                    self.wide.append(nnx.Linear(4, i + 1, use_bias=False, rngs=rngs))
                self.many = nnx.List()
                for _ in range(9000):
                    self.many.append(Block(rngs))
        """
    )
    model = by_class(models, "Deep")
    assert [(p.path, p.count) for p in model.params] == [
        ("unknown[*].kernel", 1),
        ("wide[*].kernel", 1),
        ("many[0..8999].a.kernel", 9000),
        ("many[0..8999].b.kernel", 9000),
        ("many[0..8999].c.kernel", 9000),
    ]
    assert any(
        note.startswith("`for _ in range(n)` at line ")
        and note.endswith("the length is not known, so its body is counted once")
        for note in model.assumptions
    )
    assert any("more than 1024 iterations differ" in note for note in model.assumptions)
    # 9000 blocks of 3 layers one by one would take 36,000 steps of a 20,000 budget.
    assert not any("the rest is not counted" in note for note in model.assumptions)


def test_a_plain_list_attribute_is_counted_and_flagged_as_flax_rejects_it() -> None:
    body = """
        class Net(nnx.Module{keywords}):
            def __init__(self, rngs):
                self.layers = []
                for _ in range(3):
                    self.layers.append(nnx.Linear(4, 4, use_bias=False, rngs=rngs))
        """
    strict = by_class(models_of(body.format(keywords="")), "Net")
    assert [(p.path, p.count) for p in strict.params] == [("layers[0..2].kernel", 3)]
    assert any("plain Python list of modules: Flax 0.12 rejects it" in n for n in strict.assumptions)
    relaxed = by_class(models_of(body.format(keywords=", pytree=False")), "Net")
    assert relaxed.param_count == strict.param_count == 48
    assert not any("plain Python list" in n for n in relaxed.assumptions)


def test_vmap_call_forms_stack_like_the_decorator() -> None:
    models = models_of(
        """
        class Block(nnx.Module):
            def __init__(self, d, rngs):
                self.up = nnx.Linear(d, 4 * d, use_bias=False,
                                     kernel_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("data", "model")), rngs=rngs)

        def create(rngs):
            return Block(16, rngs)

        def wide(rngs):
            zeros = nnx.initializers.zeros_init()
            return nnx.Linear(16, 64, use_bias=False, kernel_init=nnx.with_partitioning(zeros, (None, "model")), rngs=rngs)

        class Stack(nnx.Module):
            def __init__(self, d, rngs):
                stacked = {nnx.PARTITION_NAME: None}
                self.a = nnx.vmap(create, in_axes=0, out_axes=0, transform_metadata=stacked)(rngs.fork(split=5))
                self.b = nnx.vmap(lambda r: Block(d, r), transform_metadata=stacked)(rngs.split(3))
                self.c = nnx.split_rngs(splits=4)(
                    nnx.vmap(create, in_axes=(0,), out_axes=1, transform_metadata=stacked)
                )(rngs)
                self.d = nnx.vmap(in_axes=0, transform_metadata={nnx.PARTITION_NAME: "data"})(wide)(rngs.split(2))
                self.e = nnx.vmap(create)(rngs.split(2))

        stack = Stack(8, nnx.Rngs(0))
        """
    )
    model = instance(models, "stack")
    rows = [(p.path, p.shape, p.spec.entries if p.spec else None, p.shard_shape) for p in model.params]
    assert rows == [
        ("a.up.kernel", (5, 16, 64), (None, "data", "model"), (5, 8, 16)),
        ("b.up.kernel", (3, 8, 32), (None, "data", "model"), (3, 4, 8)),
        ("c.up.kernel", (16, 4, 64), ("data", None, "model"), (8, 4, 16)),
        ("d.kernel", (2, 16, 64), ("data", None, "model"), (1, 16, 16)),
        # Without transform_metadata the annotation keeps one layer's rank, and Flax lays the
        # stacked value out with it as written.
        ("e.up.kernel", (2, 16, 64), ("data", "model"), (1, 4, 64)),
    ]


def test_scan_stacks_the_layers_it_creates() -> None:
    models = models_of(
        """
        class Block(nnx.Module):
            def __init__(self, d, rngs):
                self.up = nnx.Linear(d, 4 * d, use_bias=False,
                                     kernel_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("data", "model")), rngs=rngs)

        class Stack(nnx.Module):
            def __init__(self, rngs):
                @nnx.split_rngs(splits=6)
                @nnx.scan(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
                def create(r):
                    return Block(8, r)

                self.layers = create(rngs)

                def step(carry, r):
                    return carry, nnx.Linear(8, 8, use_bias=False, rngs=r)

                _, self.experts = nnx.scan(step, in_axes=(nnx.Carry, 0), out_axes=(nnx.Carry, 0))(0, rngs.split(4))
                self.shared = nnx.scan(lambda r: nnx.Embed(10, 8, rngs=r), in_axes=(None,), out_axes=0, length=3)(rngs)

                @nnx.scan
                def default(carry, r):
                    return carry, nnx.Linear(2, 2, use_bias=False, rngs=r)

                _, self.bare = default(0, rngs.split(5))

        stack = Stack(nnx.Rngs(0))
        """
    )
    model = instance(models, "stack")
    rows = [(p.path, p.shape, p.spec.entries if p.spec else None) for p in model.params]
    assert rows == [
        ("layers.up.kernel", (6, 8, 32), (None, "data", "model")),
        ("experts.kernel", (4, 8, 8), None),
        ("shared.embedding", (3, 10, 8), None),
        ("bare.kernel", (5, 2, 2), None),
    ]
