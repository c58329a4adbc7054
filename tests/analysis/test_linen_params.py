"""Flax Linen parameters: `nn.Dense/DenseGeneral/Embed/LayerNorm/RMSNorm/Conv` with a partitioned
`*_init`, and `self.param(...)`, inside `@nn.compact` methods.

Flax is the judge of shapes and specs: random layer programs (seeded) are initialised by Flax
in a subprocess, each boxed parameter's names renamed by `nn.logical_to_mesh_axes` when they are
logical, and each shardls `param` site must have the same global shape and mesh spec.
"""

from __future__ import annotations

import random
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.facts import FileAnalysis
from shardls.analysis.recognizers.linen import NOT_PLACED
from shardls.core import Severity

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import fake_devices_env, run_script_under_jax

RULES = (("embed", "data"), ("hidden", "model"), ("vocab", "model"), ("heads", "model"))
_HEADER = """\
import jax
import jax.numpy as jnp
from flax import linen as nn

mesh = jax.make_mesh((2, 4), ("data", "model"))
RULES = {rules!r}
init = nn.initializers.lecun_normal()
"""


def _program(body: str, input_shape: tuple[int, ...], logical: bool) -> str:
    """One module whose `__call__` holds `body`, initialised on an input of `input_shape`
    (under the rules when `logical`)."""
    run = f"variables = Model().init(jax.random.key(0), jnp.ones({input_shape!r}))"
    if logical:
        run = f"with nn.logical_axis_rules(RULES):\n    {run}"
    return (
        _HEADER.format(rules=RULES)
        + "\n\nclass Model(nn.Module):\n    @nn.compact\n    def __call__(self, x):\n"
        + textwrap.indent(body, "        ")
        + "\n        return x\n\n\n"
        + run
        + "\n"
    )


def _cases(seed: int) -> list[tuple[str, tuple[int, ...], bool, dict[str, tuple[int, ...]]]]:
    """Layer programs with random sizes; each with the sites it must give (name -> rank)."""
    rng = random.Random(seed)
    d, f, v = rng.choice((8, 16, 24, 32)), rng.choice((8, 16, 40, 64)), rng.choice((32, 48, 96))
    heads, head_dim = rng.choice((2, 4, 8)), rng.choice((4, 8))
    w = rng.choice((3, 5))
    p = "nn.with_partitioning"
    lp = "nn.with_logical_partitioning"
    return [
        (
            f"x = nn.Dense({f}, kernel_init={p}(init, (None, 'model')))(x)",
            (4, d),
            False,
            {"Dense_0.kernel": ()},
        ),
        (
            f"x = nn.Dense(features={f}, kernel_init={lp}(init, ('embed', 'hidden')),"
            f" bias_init={lp}(nn.initializers.zeros, ('hidden',)))(x)",
            (2, 3, d),
            True,
            {"Dense_0.kernel": (), "Dense_0.bias": ()},
        ),
        (
            f"x = nn.DenseGeneral(({heads}, {head_dim}), kernel_init={lp}(init, ('embed', 'heads', None)),"
            " use_bias=False)(x)",
            (4, d),
            True,
            {"DenseGeneral_0.kernel": ()},
        ),
        (
            f"e = nn.Embed({v}, {d}, embedding_init={lp}(nn.initializers.normal(), ('vocab', 'embed')))\n"
            "x = e(jnp.zeros((2,), jnp.int32))",
            (2,),
            True,
            {"Embed_0.embedding": ()},
        ),
        (
            f"x = nn.LayerNorm(scale_init={lp}(nn.initializers.ones, ('embed',)),"
            f" bias_init={p}(nn.initializers.zeros, ('data',)))(x)",
            (4, d),
            True,
            {"LayerNorm_0.scale": (), "LayerNorm_0.bias": ()},
        ),
        (
            f"x = nn.Conv({f}, ({w}, {w}), kernel_init={p}(init, (None, None, None, 'model')))(x)",
            (1, 6, 6, d),
            False,
            {"Conv_0.kernel": ()},
        ),
        (
            f"w = self.param('w', {p}(nn.initializers.zeros, ('data', 'model')), ({d}, x.shape[-1]))\n"
            f"u = self.param('u', {lp}(nn.initializers.zeros, ('hidden', 'embed')), (x.shape[-1], {f}), jnp.bfloat16)",
            (4, f),
            True,
            {"w": (), "u": ()},
        ),
    ]


FLAX_SIDE = textwrap.dedent(
    """
    import json, sys
    import jax
    import flax.linen as nn
    from flax import traverse_util

    results = []
    for source in json.load(sys.stdin):
        namespace = {}
        exec(source, namespace)
        variables = namespace["variables"]
        boxed = traverse_util.flatten_dict(variables["params"], sep=".")
        flat = traverse_util.flatten_dict(nn.meta.unbox(variables)["params"], sep=".")
        flat_specs = {
            name: nn.logical_to_mesh_axes(box.names, namespace["RULES"])
            if isinstance(box, nn.LogicallyPartitioned) else box.get_partition_spec()
            for name, box in boxed.items() if isinstance(box, nn.Partitioned)
        }
        results.append({
            name: {"shape": list(a.shape), "dtype": str(a.dtype), "spec": list(flat_specs.get(name, ()))}
            for name, a in flat.items()
        })
    print(json.dumps(results))
    """
)


def _flax(sources: list[str], script: str = FLAX_SIDE) -> list[dict[str, Any]]:
    """Run `script` under Flax on 8 fake CPU devices with the programs on stdin."""
    result: list[dict[str, Any]] = run_script_under_jax(["-c", script], sources, fake_devices_env(8))
    return result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_layer_shapes_and_specs_agree_with_flax(seed: int) -> None:
    cases = _cases(seed)
    sources = [_program(body, shape, logical) for body, shape, logical, _ in cases]
    expected = _flax(sources)
    for source, (_, _, _, sites), flax in zip(sources, cases, expected):
        analysis = analyze(source)
        for name in sites:
            site = site_named(analysis, name)
            assert list(site.shape or ()) == flax[name]["shape"], (name, source)
            assert site.dtype is not None and site.dtype.name == flax[name]["dtype"], (name, source)
            assert site.spec is not None
            padded = list(site.spec.entries) + [None] * (len(flax[name]["shape"]) - len(site.spec.entries))
            assert padded == flax[name]["spec"] + [None] * (len(padded) - len(flax[name]["spec"])), (
                name,
                source,
            )
        assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR], source


def test_unknown_input_is_a_named_size_and_missing_rules_leave_the_axes_unknown() -> None:
    """A module nobody visibly applies: the input's dimension is named, never guessed, and logical
    names with no rules in effect have no mesh axes yet (no mesh, no layout)."""
    analysis = analyze(
        """
        import jax
        from flax import linen as nn

        mesh = jax.make_mesh((2, 4), ("data", "model"))

        class Block(nn.Module):
            width: int = 64

            @nn.compact
            def __call__(self, x):
                y = nn.Dense(self.width, kernel_init=nn.with_partitioning(nn.initializers.zeros, (None, "model")))(x)
                return nn.Dense(8, kernel_init=nn.with_logical_partitioning(nn.initializers.zeros, ("mlp", "embed")))(y)
        """
    )
    first = site_named(analysis, "Dense_0.kernel")
    assert first.shape is not None and first.shape[1] == 64 and not isinstance(first.shape[0], int)
    assert first.mesh is not None and first.mesh.fallback
    logical = site_named(analysis, "Dense_1.kernel")
    assert logical.mesh is None and logical.layout is None
    assert logical.shape is not None and logical.shape[1] == 8


_PLACED_LATER = """
import jax
import jax.numpy as jnp
from flax import linen as nn

mesh = jax.make_mesh((2, 4), ("data", "model"))

class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        return self.param("w", nn.with_partitioning(nn.initializers.zeros, ("model",){mesh}), (6,))

{run}
"""


def test_a_rejected_layout_is_a_warning_that_says_linen_only_records_names() -> None:
    """Without `mesh=` Linen lays nothing out here: JAX rejects the layout only where the
    variables are placed, so the problem is a warning naming that."""
    run = "with jax.set_mesh(mesh):\n    Block().init(jax.random.key(0), jnp.ones((2, 3)))"
    analysis = analyze(_PLACED_LATER.format(mesh="", run=run))
    problems = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert problems and all(d.severity is Severity.WARNING for d in problems)
    assert NOT_PLACED in problems[0].assumptions


@pytest.mark.parametrize(
    ("run", "code", "severity"),
    [
        ("Block().init(jax.random.key(0), jnp.ones((2, 3)))", "SH001", Severity.ERROR),
        (
            "@jax.jit\ndef create():\n    return Block().init(jax.random.key(0), jnp.ones((2, 3)))",
            "SH007",
            Severity.WARNING,
        ),
        # Applied where shardls does not look: under jit it would be padded, so no error.
        ("jax.jit(Block().init)(jax.random.key(0), jnp.ones((2, 3)))", "SH001", Severity.WARNING),
    ],
)
def test_with_a_mesh_linen_constrains_the_value_where_it_is_made(
    run: str, code: str, severity: Severity
) -> None:
    """With `mesh=` Linen applies the constraint when `self.param` unboxes the value (checked with
    Flax on an Auto mesh: eagerly an uneven shard raises IndivisibleError, inside jit it is
    padded and comes back replicated)."""
    source = _PLACED_LATER.format(mesh=", mesh", run=run).replace(
        '("data", "model"))', '("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)'
    )
    analysis = analyze("# shardls: device-count=8\n" + source)
    found = [d for d in analysis.diagnostics if d.code == code]
    assert found and all(d.severity is severity for d in found), analysis.diagnostics


_BLOCK = """
class Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(self.width, kernel_init=nn.with_logical_partitioning(nn.initializers.zeros, ("embed", "mlp")))(x)
        w = self.param("w", nn.with_logical_partitioning(nn.initializers.zeros, ("mlp", "embed")), (self.width, x.shape[-1]))
        return jnp.dot(y, w){tail}
"""
"""A layer and a parameter with logical names; `{tail}` is `, None` for the body of a scan."""


TREE_PROGRAM = """
import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.sharding import NamedSharding, PartitionSpec

mesh = jax.make_mesh({mesh_shape!r}, ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
rules = {rules!r}

{block}


class Model(nn.Module):
    layers: int
    width: int

    @nn.compact
    def __call__(self, x):
        x = nn.LayerNorm(scale_init=nn.with_logical_partitioning(nn.initializers.ones, ("embed",)))(x)
        for _ in range(self.layers):
            x = Block(self.width)(x)
        return x


model = Model({layers}, {width})
x = jnp.ones({input_shape!r})
abstract = jax.eval_shape(model.init, jax.random.key(0), x)
specs = nn.get_partition_spec(abstract)
shardings = nn.logical_to_mesh_sharding(specs, mesh, rules)


def init_fn(key, x):
    return model.init(key, x)


variables = jax.jit(init_fn, out_shardings=shardings)(jax.random.key(0), x)
"""

TREE_FLAX_SIDE = textwrap.dedent(
    """
    import json, sys
    import jax
    from flax import traverse_util
    import flax.linen as nn

    results = []
    for source in json.load(sys.stdin):
        namespace = {}
        exec(source, namespace)
        flat = traverse_util.flatten_dict(nn.meta.unbox(namespace["variables"]))
        results.append({
            "variables" + "".join(f"[{k!r}]" for k in path): list(a.sharding.shard_shape(a.shape))
            for path, a in flat.items()
        })
    print(json.dumps(results))
    """
)


def _jit_outputs(analysis: FileAnalysis) -> dict[str, list[object]]:
    """The per-device shape of each leaf of `variables = jax.jit(init_fn, ...)(...)`."""
    return {
        site.name: list(site.shard_shape or ())
        for site in analysis.sites
        if site.name is not None and site.name.startswith("variables[")
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_jit_of_init_with_linen_shardings_agrees_with_flax(seed: int) -> None:
    """`jax.eval_shape(model.init)`, `nn.get_partition_spec`, `nn.logical_to_mesh_sharding` and
    `jax.jit(init, out_shardings=...)`: each output leaf's per-device shape as Flax gives it."""
    rng = random.Random(seed)
    rules = (("embed", rng.choice(("data", "model"))), ("mlp", rng.choice(("data", "model"))))
    sources = [
        TREE_PROGRAM.format(
            block=_BLOCK.replace("{tail}", ""),
            mesh_shape=rng.choice(((2, 4), (4, 2), (8, 1))),
            rules=rules,
            layers=rng.randint(1, 3),
            width=rng.choice((16, 32, 64)),
            input_shape=(8, rng.choice((8, 16, 24))),
        )
    ]
    expected = _flax(sources, TREE_FLAX_SIDE)[0]
    analysis = analyze("# shardls: device-count=8\n" + sources[0])
    found = _jit_outputs(analysis)
    assert found == expected
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


def test_logical_to_mesh_reads_the_rules_where_it_is_called() -> None:
    """Rules apply where `nn.logical_to_mesh` runs (the `with` around it), not where its result
    is used; with no rules in effect there the mesh axes stay unknown, never unsharded."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from flax import linen as nn
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        mesh = jax.make_mesh((2, 4), ("data", "model"))
        rules = (("embed", "data"), ("mlp", "model"))
        logical = {"kernel": P("embed", "mlp")}
        with nn.logical_axis_rules(rules):
            inside = nn.logical_to_mesh(logical)
        outside = nn.logical_to_mesh(logical)
        a = jax.device_put(jnp.zeros((16, 64)), NamedSharding(mesh, inside["kernel"]))
        with nn.logical_axis_rules(rules):
            b = jax.device_put(jnp.zeros((16, 64)), NamedSharding(mesh, outside["kernel"]))
        """
    )
    a, b = site_named(analysis, "a"), site_named(analysis, "b")
    assert a.spec is not None and a.spec.entries == ("data", "model")
    assert a.shard_shape == (8, 16)
    assert b.spec is not None and b.spec.entries == (None, None)
    assert any("unknown" in note for note in b.assumptions)
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


def test_self_param_reads_shape_and_dtype_by_keyword() -> None:
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from flax import linen as nn

        mesh = jax.make_mesh((2, 4), ("data", "model"))

        class Block(nn.Module):
            @nn.compact
            def __call__(self, x):
                return self.param("w", nn.with_partitioning(nn.initializers.zeros, ("model",)), shape=(8,), dtype=jnp.bfloat16)

        Block().init(jax.random.key(0), jnp.ones((2, 3)))
        """
    )
    site = site_named(analysis, "w")
    assert site.shape == (8,) and site.dtype is not None and site.dtype.name == "bfloat16"


SCAN_PROGRAM = """
import jax
import jax.numpy as jnp
from flax import linen as nn

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
rules = {rules!r}

{block}


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x, _ = nn.scan(
            Block, length={layers}, variable_axes={{"params": {axis}}}, split_rngs={{"params": True}},
            metadata_params={{nn.PARTITION_NAME: "layers"}},
        )({width})(x)
        return x


model = Model()
x = jnp.ones((8, {features}))
shardings = nn.logical_to_mesh_sharding(nn.get_partition_spec(jax.eval_shape(model.init, jax.random.key(0), x)), mesh, rules)


def init_fn(key, x):
    return model.init(key, x)


variables = jax.jit(init_fn, out_shardings=shardings)(jax.random.key(0), x)
"""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scanned_layers_are_stacked_as_flax_stacks_them(seed: int) -> None:
    """`nn.scan(Block, length=n, variable_axes={'params': axis}, metadata_params=...)`: each
    parameter gains the axis and the partition name (`ScanBlock_0`), at the sites and in the tree."""
    rng = random.Random(seed)
    layers = rng.choice((2, 4))
    rules = (("layers", rng.choice((None, "data"))), ("embed", "model"), ("mlp", rng.choice((None, "data"))))
    source = SCAN_PROGRAM.format(
        block=_BLOCK.replace("{tail}", ", None"),
        rules=rules,
        layers=layers,
        axis=rng.choice((0, 1)),
        width=rng.choice((8, 16)),
        features=rng.choice((8, 16)),
    )
    expected = _flax([source], TREE_FLAX_SIDE)[0]
    analysis = analyze("# shardls: device-count=8\n" + source)
    found = _jit_outputs(analysis)
    assert found == expected
    stacked = site_named(analysis, "w")
    assert stacked.shape is not None and len(stacked.shape) == 3 and layers in stacked.shape
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
