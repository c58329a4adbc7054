"""Real sites get a rank: helpers whose arrays are parameters, computed arrays, initializers
passed in from elsewhere. Modelled on maxtext, flax and jax-llm-examples code (docs/realcode.md)."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze, site_named, workspace

from shardls.analysis.facts import SymbolicDim

HEADER = """
import jax, jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P
"""


def test_unpacking_a_parameters_shape_gives_its_rank_and_names() -> None:
    analysis = analyze(
        HEADER
        + """
def shard(x, mesh):
    b, s, d = x.shape
    return jax.device_put(x, NamedSharding(mesh, P("data", None, "model")))
"""
    )
    site = analysis.sites[0]
    assert site.shape == (SymbolicDim("b"), SymbolicDim("s"), SymbolicDim("d"))
    assert site.mesh is None and not analysis.diagnostics
    dims = site.shard_dims
    assert dims is not None and [d.axes for d in dims] == [("data",), (), ("model",)]
    assert [d.undecided for d in dims] == [True, False, True]


def test_a_partial_unpacking_or_a_rebinding_gives_no_rank() -> None:
    analysis = analyze(
        HEADER
        + """
def starred(x, mesh):
    b, *rest = x.shape
    return jax.device_put(x, NamedSharding(mesh, P("data")))

def rebound(y, mesh):
    b, s = y.shape
    y = transform(y)
    return jax.device_put(y, NamedSharding(mesh, P("data")))
"""
    )
    assert [s.shape for s in analysis.sites] == [None, None]
    assert [s.min_rank for s in analysis.sites] == [1, 1]


def test_normalised_vectors_and_reductions_keep_their_shape() -> None:
    """jax-llm-examples ragged_attention: `v / jnp.linalg.norm(v, axis=-1)[..., None]`."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "x"))
v = jax.random.normal(jax.random.key(0), (8, 16, 4, 32))
a = jax.device_put(v / jnp.linalg.norm(v, axis=-1)[..., None], NamedSharding(mesh, P(None, "x")))
b = jax.device_put(jnp.sum(v, axis=(0, 2), keepdims=True), NamedSharding(mesh, P(None, "x")))
c = jax.device_put(v.mean(axis=1), NamedSharding(mesh, P("data")))
d = jax.device_put(jnp.stack([v] * 4), NamedSharding(mesh, P("x")))
e = jax.device_put(jnp.concatenate([v, v], axis=1), NamedSharding(mesh, P(None, "x")))
f = jax.device_put(jax.nn.softmax(jnp.expand_dims(v, 0)), NamedSharding(mesh, P(None, "data")))
g = jax.device_put(jnp.argmax(v, axis=-1), NamedSharding(mesh, P("data")))
"""
    )
    shards = {name: site_named(analysis, name).shard_shape for name in "abcdefg"}
    assert shards == {
        "a": (8, 4, 4, 32),
        "b": (1, 4, 1, 32),
        "c": (4, 4, 32),
        "d": (1, 8, 16, 4, 32),
        "e": (8, 8, 4, 32),
        "f": (1, 4, 16, 4, 32),
        "g": (4, 16, 4),
    }
    assert site_named(analysis, "g").dtype is not None and site_named(analysis, "g").dtype.name == "int32"


def test_concatenating_with_an_array_not_known_here_keeps_the_known_operands_rank() -> None:
    """bonsai llada: `x = jnp.concatenate([prompt, jnp.full((prompt.shape[0], gen_length),
    mask_id, dtype=jnp.int32)], axis=1)` with `prompt` a parameter: JAX rejects operands of
    other ranks, so the result has rank 2; the joined size stays unknown."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((8,), ("fsdp",))

def generate(prompt, gen_length=128, mask_id=3):
    x = jnp.concatenate([prompt, jnp.full((16, gen_length), mask_id, dtype=jnp.int32)], axis=1)
    y = jnp.concatenate([prompt, prompt])
    with jax.set_mesh(mesh):
        x = jax.device_put(x, P("fsdp"))
        y = jax.device_put(y, P("fsdp"))
    return x, y
"""
    )
    x = site_named(analysis, "x")
    assert x.shape is not None and x.shape[0] == 16 and isinstance(x.shape[1], SymbolicDim)
    assert x.shard_shape is not None and x.shard_shape[0] == 2
    assert site_named(analysis, "y").shape is None
    assert not analysis.diagnostics


def test_an_unknown_keepdims_or_axis_gives_no_rank() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "x"))
def f(axis, keep):
    v = jnp.zeros((8, 16))
    return jax.device_put(jnp.sum(v, axis=axis), NamedSharding(mesh, P())), jax.device_put(
        jnp.max(v, axis=0, keepdims=keep), NamedSharding(mesh, P())
    )
"""
    )
    assert [s.shape for s in analysis.sites] == [None, None]


def test_rngs_shorthand_samplers_make_arrays() -> None:
    """flax_gspmd: `jax.device_put(rngs.normal((8, 1024)), P('data', None))`."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))
rngs = nnx.Rngs(0)
with jax.set_mesh(mesh):
    label = jax.device_put(rngs.normal((8, 1024)), P("data", None))
    ids = jax.device_put(rngs.randint((8, 16), 0, 100), P("data", None))
"""
    )
    assert site_named(analysis, "label").shard_shape == (4, 1024)
    ids = site_named(analysis, "ids")
    assert ids.shard_shape == (4, 16) and ids.dtype is not None and ids.dtype.name == "int32"


def test_rngs_shorthand_initializers_make_arrays_of_the_shape_asked() -> None:
    """flax_gspmd.ipynb and tests/nnx/spmd_test.py: `nnx.Param(rngs.lecun_normal()((4, 8)),
    out_sharding=(None, 'model'))`; `rngs.normal` is the sampler, not an initializer factory."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))
rngs = nnx.Rngs(0)
with jax.set_mesh(mesh):
    w = nnx.Param(rngs.lecun_normal()((4, 8)), out_sharding=(None, "model"))
    h = jax.device_put(rngs.he_uniform(in_axis=0)((8, 4), jnp.bfloat16), P("data"))
"""
    )
    assert site_named(analysis, "w").shard_shape == (4, 2)
    h = site_named(analysis, "h")
    assert h.shard_shape == (4, 4) and h.dtype is not None and h.dtype.name == "bfloat16"
    assert not analysis.diagnostics


def test_an_initializer_passed_in_follows_flaxs_protocol_as_an_assumption() -> None:
    """maxtext moe.py: `nnx.Param(self.kernel_init(key, (experts, d, f), dtype, ...))`."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))

class MoE(nnx.Module):
    def __init__(self, kernel_init, rngs):
        self.kernel_init = kernel_init
        with jax.set_mesh(mesh):
            self.wi = nnx.Param(
                self.kernel_init(rngs.params(), (6, 16, 64), jnp.bfloat16),
                sharding=(None, "data", "model"),
            )
"""
    )
    site = next(s for s in analysis.sites if s.name and s.name.endswith("wi"))
    assert site.shape == (6, 16, 64)
    assert site.dtype is not None and site.dtype.name == "bfloat16"


def test_an_initializer_with_an_indivisible_shape_is_at_most_a_warning() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))

class MoE(nnx.Module):
    def __init__(self, kernel_init, rngs):
        with jax.set_mesh(mesh):
            self.wo = nnx.Param(kernel_init(rngs.params(), (6, 15)), sharding=(None, "model"))
"""
    )
    flagged = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert flagged and all(d.severity.value != "error" for d in flagged)
    assert "initializer protocol" in flagged[0].message


def test_a_fallback_mesh_without_the_specs_axes_is_not_used() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))

def put(n, other_mesh):
    return jax.device_put(jnp.zeros((n, 128)), NamedSharding(other_mesh, P("fsdp", "tp")))
"""
    )
    site = analysis.sites[0]
    assert site.mesh is None and site.layout is None
    dims = site.shard_dims
    assert dims is not None and [d.factor for d in dims] == [None, None]


def test_src_layout_packages_resolve_as_top_level_imports(tmp_path: Path) -> None:
    """maxtext: `from maxtext.layers.initializers import default_bias_init` under src/."""
    analyzer = workspace(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/inits.py": "import jax\ndefault_bias_init = jax.nn.initializers.constant(0.0)\n",
            "src/pkg/layer.py": """
                import jax
                from flax import nnx
                from pkg.inits import default_bias_init

                mesh = jax.make_mesh((2, 4), ("data", "model"))

                class Layer(nnx.Module):
                    def __init__(self, rngs):
                        with jax.set_mesh(mesh):
                            self.b = nnx.Param(default_bias_init(rngs.params(), (8,)), sharding=("model",))
            """,
        },
    )
    layer = tmp_path / "src" / "pkg" / "layer.py"
    analysis = analyzer.analyze(str(layer), layer.read_text())
    assert [s.shard_shape for s in analysis.sites if s.name and s.name.endswith("b")] == [(2,)]


def test_an_asserted_rank_fixes_the_rank_of_a_parameter() -> None:
    """jax-llm-examples llama3 `decode_step`: `assert last_tokens.ndim == 2`."""
    analysis = analyze(
        HEADER
        + """
def decode(last_tokens, mesh):
    assert last_tokens.ndim == 2
    return jax.device_put(jnp.ones(last_tokens.shape, dtype=jnp.int32), NamedSharding(mesh, P("data")))

def clash(x, mesh):
    assert len(x.shape) == 2
    b, s, d = x.shape
    return jax.device_put(x, NamedSharding(mesh, P("data")))

def branch(y, mesh):
    if y.ndim == 2:
        pass
    return jax.device_put(y, NamedSharding(mesh, P("data")))
"""
    )
    decode, clash, branch = analysis.sites
    assert decode.shape == (SymbolicDim("last_tokens.shape[0]"), SymbolicDim("last_tokens.shape[1]"))
    assert clash.shape is None and branch.shape is None


def test_a_number_where_the_dtype_goes_makes_no_array() -> None:
    """flax docs_nnx/guides/flax_gspmd.ipynb: `nnx.Param(jnp.ones(4,4), out_sharding=(None, 'model'), ...)`
    raises TypeError in JAX (4 is not a dtype): no rank-1 array and no SH002 about it."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"))
w = nnx.Param(jnp.ones(4, 4), out_sharding=(None, "model"), eager_sharding=True, mesh=mesh)
"""
    )
    assert not analysis.diagnostics
    assert [s.shape for s in analysis.sites] == [None]


def test_a_workspace_copy_of_flax_does_not_replace_the_flax_model(tmp_path: Path) -> None:
    """In the flax repository itself, `from flax import nnx` must still mean the modelled Flax."""
    analyzer = workspace(
        tmp_path,
        {
            "flax/__init__.py": "",
            "flax/nnx/__init__.py": "class Rngs:\n    def normal(self, shape):\n        return None\n",
            "docs/guide.py": """
                import jax
                from flax import nnx
                from jax.sharding import PartitionSpec as P

                mesh = jax.make_mesh((2, 4), ("data", "model"))
                rngs = nnx.Rngs(0)
                with jax.set_mesh(mesh):
                    label = jax.device_put(rngs.normal((8, 1024)), P("data", None))
            """,
        },
    )
    guide = tmp_path / "docs" / "guide.py"
    analysis = analyzer.analyze(str(guide), guide.read_text())
    assert site_named(analysis, "label").shard_shape == (4, 1024)


def test_an_einsum_with_unknown_operands_has_the_rank_of_its_output() -> None:
    """jax-llm-examples llama3 rope: `jnp.einsum("BT,k->BTk", positions, freq, out_sharding=P(None, None, None))`."""
    analysis = analyze(
        HEADER
        + """
def rope(positions, features):
    fraction = jnp.arange(0, features, 2, dtype=jnp.float32) / features
    return jnp.einsum("BT,k->BTk", positions, fraction, out_sharding=P(None, None, None))

def proj(x):
    return jnp.einsum("btd,dh->bth", x, jnp.zeros((128, 64)), out_sharding=P("data", None, "model"))

def dots(x, y):
    return jnp.einsum("...d,d->...", x, y, out_sharding=P())

def misfit(x):
    return jnp.einsum("btd,dh->bth", x, jnp.zeros((128,)), out_sharding=P("data"))
"""
    )
    rope, proj, dots, misfit = analysis.sites
    assert rope.shape == (SymbolicDim("B"), SymbolicDim("T"), SymbolicDim("k"))
    assert proj.shape == (SymbolicDim("b"), SymbolicDim("t"), 64)
    assert dots.shape is None and misfit.shape is None
    assert not analysis.diagnostics


def test_a_rank_read_from_the_body_decides_at_most_a_warning() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"))

def in_a_branch(x, cond):
    y = jax.device_put(x, NamedSharding(mesh, P("a", "b", "c")))
    if cond:
        b, s = x.shape
    return y

def unpacked(x):
    b, s = x.shape
    return jax.device_put(x, NamedSharding(mesh, P("a", "b", "c")))
"""
    )
    branch, unpacked = analysis.sites
    assert branch.shape is None
    assert unpacked.shape == (SymbolicDim("b"), SymbolicDim("s"))
    assert [(d.code, d.severity.value) for d in analysis.diagnostics] == [("SH002", "warning")]
