"""Parameter trees of NNX modules as values (issue 12, "a layout at the sites real code has"):
`nnx.state`, `nnx.split`, `nnx.to_pure_dict`, `nnx.get_partition_spec`, `nnx.get_named_sharding`
and the ways code reads a variable's array. Keys and nesting are Flax 0.12's (checked under
Flax: attribute names, list items by index, `nnx.Dict` items by key, subtrees without a selected
variable left out). What shardls cannot see stays unknown: never an empty or guessed subtree."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.facts import SymbolicDim
from shardls.analysis.library import nnx_tree

HEADER = """
import jax, jax.numpy as jnp
from collections.abc import Sequence
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "fsdp"), axis_types=(AxisType.Auto, AxisType.Auto))
rep = NamedSharding(mesh, P())

class Norm(nnx.Module):
    def __init__(self, n, rngs):
        self.scale = nnx.Param(nnx.initializers.ones(rngs.params(), (n,), jnp.bfloat16))

class Block(nnx.Module):
    def __init__(self, d, f, rngs):
        self.norm = Norm(d, rngs)
        self.experts = nnx.List([nnx.Linear(d, f, rngs=rngs) for _ in range(3)])
        self.table = nnx.Dict({"emb": nnx.Embed(10, d, rngs=rngs)})
        self.w = nnx.Param(jnp.zeros((4, d, f)), out_sharding=(None, "fsdp", None))
        self.d = d
        self.mesh = mesh
"""


BUILT = (
    HEADER
    + """
with jax.set_mesh(mesh):
    model = Block(16, 32, nnx.Rngs(0))
state = nnx.state(model, nnx.Param)
"""
)


def test_state_is_keyed_by_attribute_index_and_dict_key() -> None:
    analysis = analyze(
        BUILT
        + """
kernel = jax.device_put(state["experts"][2]["kernel"].value, NamedSharding(mesh, P(None, "fsdp")))
scale = jax.device_put(state["norm"]["scale"][...], rep)
emb = jax.device_put(state["table"]["emb"]["embedding"].get_value(), rep)
w = jax.device_put(state["w"].value, rep)
layer = jax.device_put(model.experts[0].bias.value, NamedSharding(mesh, P("fsdp")))
"""
    )
    kernel = site_named(analysis, "kernel")
    assert (kernel.shape, kernel.shard_shape) == ((16, 32), (16, 8))
    assert site_named(analysis, "scale").shape == (16,)
    assert site_named(analysis, "scale").dtype.name == "bfloat16"
    assert site_named(analysis, "emb").shape == (10, 16)
    assert site_named(analysis, "w").shape == (4, 16, 32)
    assert site_named(analysis, "layer").shard_shape == (8,)
    assert not analysis.diagnostics


def test_pure_dict_partition_specs_named_shardings_and_split() -> None:
    analysis = analyze(
        BUILT
        + """
pure = nnx.to_pure_dict(state)
specs = nnx.get_partition_spec(state)
shardings = nnx.get_named_sharding(state, mesh)
graphdef, everything = nnx.split(model)
a = jax.device_put(pure["w"], NamedSharding(mesh, specs["w"].value))
b = jax.device_put(pure["experts"][1]["kernel"], shardings["w"].value)
c = jax.device_put(everything["experts"][0]["bias"].value, NamedSharding(mesh, specs["experts"][0]["bias"].value))
variables = nnx.pure(nnx.variables(model, nnx.Param))
e = jax.device_put(variables["table"]["emb"]["embedding"], rep)
x = pure["norm"]["scale"]
d = jax.device_put(jnp.asarray(getattr(x, "value", x)[...], jnp.float32), rep)
"""
    )
    a = site_named(analysis, "a")
    assert (a.shape, a.shard_shape) == ((4, 16, 32), (4, 4, 32))
    assert site_named(analysis, "b").shard_shape is None  # a rank-3 spec on a rank-2 array: SH002
    assert site_named(analysis, "c").shard_shape == (32,)  # unannotated: P()
    assert site_named(analysis, "d").shape == (16,)
    assert site_named(analysis, "e").shape == (10, 16)
    assert site_named(analysis, "d").dtype.name == "float32"
    assert [d.code for d in analysis.diagnostics] == ["SH002"]


def test_a_method_sees_its_own_state_with_sizes_named_after_their_expressions() -> None:
    analysis = analyze(
        HEADER
        + """
class Layer(nnx.Module):
    def __init__(self, cfg, mesh, rngs, width=64):
        self.mesh = mesh
        self.up = nnx.Linear(cfg.d_model, width, rngs=rngs)
        self.out = nnx.Param(jnp.zeros((cfg.heads, cfg.head_dim, cfg.d_model)))

    def __call__(self, x):
        def extract(v):
            if isinstance(v, nnx.variablelib.Variable):
                return v.value
            return v

        params = nnx.to_pure_dict(nnx.state(self, nnx.Param), extract)
        up = jax.device_put(params["up"]["kernel"], NamedSharding(self.mesh, P("fsdp", None)))
        out = jax.device_put(params["out"], NamedSharding(self.mesh, P(None, None, "fsdp")))
        return x
"""
    )
    up = site_named(analysis, "up")
    assert up.shape == (SymbolicDim("d_model"), SymbolicDim("width"))  # not the default 64
    assert site_named(analysis, "out").shape == (
        SymbolicDim("heads"),
        SymbolicDim("head_dim"),
        SymbolicDim("d_model"),
    )
    assert not [d for d in analysis.diagnostics if d.severity.value == "error"]


def test_unknown_attributes_stay_unknown_also_after_the_tree_is_mapped() -> None:
    analysis = analyze(
        HEADER
        + """
class Partial(nnx.Module):
    def __init__(self, make, rngs):
        self.lin = nnx.Linear(4, 8, rngs=rngs)
        self.other = make(rngs)

class Helper(nnx.Module):
    def __init__(self, rngs, init=nnx.initializers.zeros):
        self.lin = nnx.Linear(4, 8, rngs=rngs)
        self.init = init
        self.bias = nnx.Param(self.init(rngs.params(), (8,)))
        self._build(rngs)

    def _build(self, rngs):
        self.hidden = nnx.Linear(8, 8, rngs=rngs)

class Appended(nnx.Module):
    def __init__(self, rngs):
        self.layers = nnx.List([])
        for _ in range(2):
            self.layers.append(nnx.Linear(4, 4, rngs=rngs))

def build(make):
    return Partial(make, nnx.Rngs(0))

p = nnx.state(build(make=None), nnx.Param)
known = jax.device_put(p["lin"]["kernel"].value, rep)
other = jax.device_put(p["other"]["kernel"].value, rep)
mapped = jax.tree.map(lambda v: v, p)
whole = jax.device_put(mapped["lin"]["kernel"].value, rep)
mapped_other = jax.device_put(mapped["other"]["kernel"].value, rep)
h = nnx.state(Helper(nnx.Rngs(0)), nnx.Param)
hidden = jax.device_put(h["hidden"]["kernel"].value, rep)
hbias = jax.device_put(h["bias"].value, rep)
hmapped = jax.tree.map(lambda v: v, h)
hwhole = jax.device_put(hmapped["lin"]["kernel"].value, rep)
hmapped_hidden = jax.device_put(hmapped["hidden"]["kernel"].value, rep)
a = nnx.state(Appended(nnx.Rngs(0)), nnx.Param)
appended = jax.device_put(a["layers"][0]["kernel"].value, rep)
"""
    )
    for name in ("known", "whole", "hwhole"):  # mapping keeps what is known where it is known
        assert site_named(analysis, name).shape == (4, 8), name
    for name in ("other", "mapped_other", "hidden", "hmapped_hidden", "appended"):
        assert site_named(analysis, name).shape is None, name
    assert site_named(analysis, "hbias").shape == (8,)


def test_layers_created_under_nnx_vmap_are_not_given_a_guessed_rank() -> None:
    analysis = analyze(
        HEADER
        + """
class Stack(nnx.Module):
    def __init__(self, rngs):
        @nnx.vmap(in_axes=0, out_axes=0)
        def create(rngs):
            return nnx.Linear(4, 8, rngs=rngs)

        self.layers = create(rngs.fork(split=3))

s = nnx.state(Stack(nnx.Rngs(0)), nnx.Param)
stacked = jax.device_put(s["layers"]["kernel"].value, rep)
"""
    )
    assert site_named(analysis, "stacked").shape is None


def test_filters_select_variable_types() -> None:
    analysis = analyze(
        HEADER
        + """
class WithStats(nnx.Module):
    def __init__(self, rngs):
        self.bn = nnx.BatchNorm(6, rngs=rngs)
        self.lin = nnx.Linear(6, 2, rngs=rngs)

model = WithStats(nnx.Rngs(0))
params, stats = nnx.state(model, nnx.Param, nnx.BatchStat)
mean = jax.device_put(stats["bn"]["mean"].value, rep)
scale = jax.device_put(params["bn"]["scale"].value, rep)
lost = jax.device_put(stats["lin"]["kernel"].value, rep)
graphdef, taken, rest = nnx.split(model, nnx.Param, ...)
var = jax.device_put(rest["bn"]["var"].value, rep)
kernel = jax.device_put(taken["lin"]["kernel"].value, rep)
gone = jax.device_put(rest["lin"]["kernel"].value, rep)
keys = jax.device_put(jnp.zeros((len(rest),)), rep)
"""
    )
    assert site_named(analysis, "mean").shape == (6,)
    assert site_named(analysis, "scale").shape == (6,)
    assert site_named(analysis, "lost").shape is None
    assert site_named(analysis, "var").shape == (6,)
    assert site_named(analysis, "kernel").shape == (6, 2)
    assert site_named(analysis, "gone").shape is None  # `...` is the rest: the kernel went to Param
    assert site_named(analysis, "keys").shape == (1,)  # only `bn` has variables left


def test_attributes_set_under_a_decided_condition_are_known() -> None:
    analysis = analyze(
        HEADER
        + """
class Scaled(nnx.Module):
    def __init__(self, n, rngs, with_scale=True):
        if with_scale:
            self.scale = nnx.Param(jnp.ones((n,)))
        else:
            self.scale = None

class Pair(nnx.Module):
    def __init__(self, rngs, flag):
        self.on = Scaled(8, rngs)
        self.off = Scaled(8, rngs, with_scale=False)
        self.maybe = Scaled(8, rngs, with_scale=flag)

def build(flag):
    s = nnx.state(Pair(nnx.Rngs(0), flag), nnx.Param)
    on = jax.device_put(s["on"]["scale"].value, rep)
    off = jax.device_put(s["off"]["scale"].value, rep)
    maybe = jax.device_put(s["maybe"]["scale"].value, rep)
    return on, off, maybe
"""
    )
    assert site_named(analysis, "on").shape == (8,)
    assert site_named(analysis, "off").shape is None  # not in the state: Flax has no `off` entry
    assert site_named(analysis, "maybe").shape is None  # `flag` is not known where it is built


def test_placing_a_whole_state_places_each_variables_array() -> None:
    analysis = analyze(
        HEADER
        + """
a = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
b = nnx.Linear(3, 8, rngs=nnx.Rngs(0))
state = nnx.state((a, b))
placed = jax.device_put(state, NamedSharding(mesh, P()))
"""
    )
    shapes = {s.name: s.shape for s in analysis.sites if s.name and s.name.startswith("placed[")}
    assert shapes == {
        "placed[0]['bias']": (3,),
        "placed[0]['kernel']": (2, 3),
        "placed[1]['bias']": (8,),
        "placed[1]['kernel']": (3, 8),
    }


def test_a_pytree_attribute_is_unknown_and_a_config_is_left_out() -> None:
    analysis = analyze(
        HEADER
        + """
import dataclasses

@dataclasses.dataclass
class Settings:
    width: int = 4

class Holder(nnx.Pytree):
    def __init__(self, params):
        self.params = nnx.data(params)

class Model(nnx.Module):
    def __init__(self, rngs):
        self.settings = Settings()
        self.lin = nnx.Linear(4, 8, rngs=rngs)
        self.holder = Holder(nnx.Param(jnp.zeros((3,))))

s = nnx.state(Model(nnx.Rngs(0)), nnx.Param)
keys = jax.device_put(jnp.zeros((len(s),)), rep)
held = jax.device_put(s["holder"]["params"].value, rep)
"""
    )
    assert site_named(analysis, "keys").shape == (2,)  # lin and the unknown holder; settings left out
    assert site_named(analysis, "held").shape is None


def test_attributes_a_method_assigns_are_unknown() -> None:
    analysis = analyze(
        HEADER
        + """
class Decoder(nnx.Module):
    def __init__(self, rngs):
        self.lin = nnx.Linear(4, 8, rngs=rngs)
        self.out = nnx.Linear(8, 2, rngs=rngs)

    def init_cache(self, n):
        self.cache = nnx.Cache(jnp.zeros((n, 8)))
        self.out = nnx.Linear(8, n, rngs=nnx.Rngs(1))

s = nnx.state(Decoder(nnx.Rngs(0)))
lin = jax.device_put(s["lin"]["kernel"].value, rep)
out = jax.device_put(s["out"]["kernel"].value, rep)
keys = jax.device_put(jnp.zeros((len(s),)), rep)
"""
    )
    assert site_named(analysis, "lin").shape == (4, 8)
    assert site_named(analysis, "out").shape is None  # init_cache may have replaced it
    keys = site_named(analysis, "keys").shape  # init_cache may add attributes: len() is unknown
    assert keys is not None and len(keys) == 1 and not isinstance(keys[0], int)


def test_a_class_is_read_once_for_all_its_instances(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a class's methods assign or change is read from its syntax once, not again for every
    instance `nnx.state` meets (every layer of a model); the answers are the same each time."""
    node = ast.parse(
        textwrap.dedent(
            """
            class Block(nnx.Module):
                def __init__(self, d, rngs):
                    self.w = nnx.Param(jnp.zeros((d,)))
                    self.layers = []
                    self.layers.append(nnx.Linear(d, d, rngs=rngs))

                def init_cache(self, n):
                    self.cache = nnx.Cache(jnp.zeros((n,)))
            """
        )
    ).body[0]
    assert isinstance(node, ast.ClassDef)
    klass = ClassInfo(node, None, None, None)  # type: ignore[arg-type]
    walked: list[str] = []
    walk = ast.walk

    def counting(tree: ast.AST) -> Iterator[ast.AST]:
        walked.append(getattr(tree, "name", type(tree).__name__))
        return walk(tree)

    monkeypatch.setattr(nnx_tree.ast, "walk", counting)
    for _ in range(3):
        assert nnx_tree._assigned_later(klass) == {"cache"}
        assert nnx_tree._mutated(klass) == {"layers"}
    assert sorted(walked) == ["__init__", "init_cache"]
