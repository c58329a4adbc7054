"""Flax NNX: annotated initializers, `Rngs` and how they are split, initializers that make arrays,
and the `nnx.vmap`/`nnx.scan`/`nnx.split_rngs` transforms that stack layers.

Layers and parameters become sites in `recognizers/nnx/`; this module only answers "what is
this expression?" for the Flax objects those recognizers read.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import Span
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.arrays import random_array
from shardls.analysis.library.convert import dtype_of, shape_of, sharding_of, spec_of
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.logical import linen_translate, read_rules
from shardls.analysis.sharded.layers import METHODS, LayerV, layer_call
from shardls.analysis.sharded.nnx_vmapped import nnx_vmapped_call
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    DictV,
    FunctionV,
    InitializerV,
    Origin,
    PartialV,
    Ref,
    Seq,
    SpecV,
    Unknown,
    Value,
    as_int,
)
from shardls.core import FLOAT32, DType

PARTITION_NAME = "partition_name"
"""`nnx.PARTITION_NAME`: the `transform_metadata` key naming a stacked axis in the spec."""

_INITIALIZER_MODULES = ("flax.nnx.initializers", "jax.nn.initializers", "flax.linen.initializers")
_INITIALIZER_FACTORIES = (
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones_init",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros_init",
)
_INITIALIZER_FUNCTIONS = ("ones", "zeros")
"""Initializers used directly as `init(key, shape, dtype)`, not made by a factory."""
_INITIALIZER_SUFFIXES = ("init", "initializer", "init_fn")
"""How the attribute or parameter holding an initializer is named (`kernel_init`, `bias_init`)."""
_SAMPLERS = ("normal", "uniform", "truncated_normal", "bernoulli", "randint", "gumbel", "laplace")
"""`nnx.Rngs` shorthands for `jax.random` samplers (the key is the stream's next one)."""
_INITIALIZER = "flax.nnx.initializers.Initializer"
"""What a factory returns: calling it makes an array of the requested shape."""
_KEYLESS_FACTORIES = tuple(
    name
    for name in _INITIALIZER_FACTORIES
    if name not in ("constant", "normal", "ones_init", "orthogonal")
    and name not in ("truncated_normal", "uniform", "zeros_init")
)
"""`nnx.Rngs` shorthands for initializer factories (Flax leaves out those whose names clash with
`jax.random` samplers): `rngs.lecun_normal()` is the factory's initializer with the key bound."""
_KEYLESS_INITIALIZER = "flax.nnx.rnglib.KeylessInitializer"
"""What such a shorthand returns: `init(shape, dtype=None, out_sharding=None)`."""


# -- values ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShardedInitializerV(Value):
    """`functools.partial(init, out_sharding=spec)`: an initializer whose arrays JAX creates
    already sharded (explicit mode), with no Flax metadata involved."""

    out_sharding: Value


@dataclass(frozen=True)
class RngsV(Value):
    """`nnx.Rngs(...)`; `split` is the leading shape of its keys after `fork(split=n)`/`split(n)`."""

    split: Value | None = None


@dataclass(frozen=True)
class VmapV(Value):
    """`nnx.vmap(f, in_axes=..., out_axes=..., transform_metadata=...)`, or its decorator form;
    also `nnx.scan`, which stacks what its body creates the same way (`length` iterations)."""

    in_axes: Value
    out_axes: Value
    transform_metadata: Value | None
    span: Span | None = None
    length: Value | None = None
    """`nnx.scan(length=n)`: the number of iterations, when no scanned argument gives it."""
    name: str = "nnx.vmap"
    func: Value | None = None
    """The function `nnx.vmap(f, ...)` maps; None for the decorator factory `nnx.vmap(...)`."""
    options: tuple[tuple[str, Value], ...] = ()
    """The other keyword arguments (`spmd_axis_name`, `axis_size`, `graph`, ...)."""


@dataclass(frozen=True)
class SplitRngsV(Value):
    """`nnx.split_rngs(splits=n)` as a decorator: the function below it sees rngs split n ways."""

    splits: Value


@dataclass(frozen=True)
class TransformMetadataV(Value):
    """`nnx.transform_metadata(...)` as a decorator. shardls does not model how it rewrites the
    annotations of the layers below it (Flax adds its `partition` to the annotation, while the
    array keeps the layout it was made with), so the stacked levels around it decide no spec."""


@dataclass(frozen=True)
class StackLevel:
    """One leading axis added by an `nnx.vmap` around the code that creates a layer."""

    size: Value
    axis: int
    """Where the axis goes (`out_axes`)."""
    has_metadata: bool
    """Whether `transform_metadata` was given: only then does the annotation gain an entry."""
    partition: Value
    """The `nnx.PARTITION_NAME` entry the annotation gains (a name or None)."""
    how: str
    span: Span | None
    transform: str = "nnx.vmap"
    """`nnx.vmap` or `nnx.scan`, for messages."""


@dataclass(frozen=True)
class StackV(Value):
    """How the layers created in a context are stacked, outermost `nnx.vmap` first."""

    levels: tuple[StackLevel, ...]


# -- annotations -------------------------------------------------------------------------------


@calls("flax.nnx.with_partitioning")
def _with_partitioning(call: CallArgs) -> Value | None:
    spec = call.get(1, "sharding")
    if spec is None:
        return None
    return InitializerV(
        with_spans(spec, call.arg_node(1, "sharding"), call.frame),
        call.get(2, "mesh"),
        call.get(None, "sharding_rules"),
        call.frame.span(call.node),
        origin=call.frame.origin("with_partitioning", call.node),
    )


def with_spans(value: Value, node: ast.expr | None, frame: Frame) -> Value:
    """A spec written as a tuple of names gets the spans of its entries, so a problem with one
    entry is underlined there (a `P(...)` call has them already)."""
    if not isinstance(value, Seq) or node is None:
        return value
    spec = spec_of(value)
    if spec is None:
        return value
    entries: tuple[Span | None, ...] = ()
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        entries = tuple(frame.span(element) for element in node.elts)
    return SpecV(spec.spec, spec.unknown_entries, frame.span(node), entries, frame.module.path)


@calls("flax.linen.logical_to_mesh_axes")
def _logical_to_mesh_axes(call: CallArgs) -> Value | None:
    """Linen's in-order rule walk, when the rules are passed (the context rules are not visible
    to an expression)."""
    names = spec_of(call.get(0, "array_dim_names"))
    rules = read_rules(call.get(1, "rules"), f"rules at line {call.frame.line_of(call.node) + 1}")
    if names is None or rules is None:
        return None
    translation = linen_translate(names.spec, rules)
    unknown = tuple(sorted({*names.unknown_entries, *translation.unresolved}))
    return SpecV(translation.spec, unknown, call.frame.span(call.node), path=call.frame.module.path)


# -- initializers ------------------------------------------------------------------------------


_INITIALIZERS = (
    _INITIALIZER,
    *(f"{module}.{name}" for module in _INITIALIZER_MODULES for name in _INITIALIZER_FUNCTIONS),
)


@calls(*(f"{module}.{name}" for module in _INITIALIZER_MODULES for name in _INITIALIZER_FACTORIES))
def _initializer_factory(call: CallArgs) -> Value | None:
    return Ref(_INITIALIZER)


@calls(*_INITIALIZERS)
def _initialize(call: CallArgs) -> Value | None:
    """`init(key, shape, dtype, out_sharding)`: the array an initializer makes (float32 unless a
    dtype is given)."""
    return ArrayV(
        shape_of(call.get(1, "shape")),
        dtype_of(call.get(2, "dtype"), call.library.environment.x64) or FLOAT32,
        sharding_of(call.get(3, "out_sharding")),
    )


@methods(Unknown, "__call__")
def _unknown_initializer(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`self.kernel_init(key, (experts, d_model, d_ff), dtype, ...)`: an initializer passed in
    from elsewhere, called by Flax's initializer protocol `init(key, shape, dtype)`. The array
    has the shape the code asks for; that the callee keeps the protocol is an assumption (its
    name says it is an initializer, its second argument is a shape), carried by each size."""
    written = call.node.func
    name = (
        written.attr
        if isinstance(written, ast.Attribute)
        else written.id
        if isinstance(written, ast.Name)
        else ""
    )
    shape = call.args[1] if len(call.args) >= 2 else None
    if not name.lower().endswith(_INITIALIZER_SUFFIXES) or not isinstance(shape, Seq):
        return None
    assumption = f"`{name}(key, shape, dtype)` makes an array of `shape` (Flax's initializer protocol)"
    return ArrayV(
        tuple(_assuming(size, assumption) for size in shape.items),
        dtype_of(call.get(2, "dtype"), call.library.environment.x64) or FLOAT32,
    )


def _assuming(size: Value, assumption: str) -> Value:
    if not isinstance(size, Const):
        return size
    origin = size.origin or Origin("size")
    return replace(size, origin=replace(origin, assumption=origin.assumption or assumption))


_ARRAY_FUNCTIONS = ("jax.numpy.", "jax.nn.", "jax.lax.")
"""Library functions whose partial is called as they are (`lax.cond(..., partial(jnp.argmax,
axis=-1), logits)`); the transforms' partials (`partial(jax.jit, ...)`) are read from the syntax
by their recognizers, and stay unknown values here."""


@calls("functools.partial")
def _partial(call: CallArgs) -> Value | None:
    """`partial(initializer, out_sharding=...)`, `partial(nnx.vmap, ...)` (which is what Flax's
    `nnx.vmap(...)` itself returns), and a workspace function's partial (jax-llm-examples'
    `lsc = partial(logical_sharding_constraint, mesh=cfg.mesh, rules=cfg.rules)`), a JAX array
    function's partial; other partials stay unknown here."""
    initializer = call.args[0] if call.args else None
    if isinstance(initializer, FunctionV) or (
        isinstance(initializer, Ref) and initializer.qualname.startswith(_ARRAY_FUNCTIONS)
    ):
        return PartialV(initializer, tuple(call.args[1:]), tuple(call.kwargs.items()))
    if isinstance(initializer, Ref) and initializer.qualname == "flax.nnx.vmap" and len(call.args) == 1:
        return _vmap(replace(call, args=[]))
    sharding = call.kwargs.get("out_sharding")
    if not (isinstance(initializer, Ref) and initializer.qualname in _INITIALIZERS) or sharding is None:
        return None
    return ShardedInitializerV(sharding, origin=call.frame.origin("partial", call.node))


@methods(RngsV, *_KEYLESS_FACTORIES)
def _keyless_factory(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    return Ref(_KEYLESS_INITIALIZER)


@calls(_KEYLESS_INITIALIZER)
def _keyless_initialize(call: CallArgs) -> Value | None:
    """`rngs.lecun_normal()((4, 8))`: the array the initializer makes with the stream's next key
    (float32 unless a dtype is given)."""
    return ArrayV(
        shape_of(call.get(0, "shape")),
        dtype_of(call.get(1, "dtype"), call.library.environment.x64) or FLOAT32,
        sharding_of(call.get(2, "out_sharding")),
    )


@methods(LayerV, *METHODS)
def _layer_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`layer(x)`, `embed.attend(q)` on a layer made where types are recorded: typed as Flax
    computes it (`sharded/layers.py`)."""
    assert isinstance(method.base, LayerV)
    return layer_call(method.base, method.name, call)


# -- random keys (only their count matters: it is the size of a stack) -------------------------


@calls("flax.nnx.Rngs")
def _rngs(call: CallArgs) -> Value | None:
    return RngsV()


@methods(RngsV, "fork", "split")
def _split_rngs_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    split = call.get(0, "split", "k")
    return RngsV(split if split is not None and not is_none(split) else None)


@methods(RngsV, "params", "dropout", "default")
def _key(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    return ArrayV(())


@methods(RngsV, *_SAMPLERS)
def _sample(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`rngs.normal((8, 1024))`: the `jax.random` sampler of the same name, with the next key."""
    return random_array(call, method.name, keyed=False)


_LEGACY_KEY = DType("uint32", 32)
"""`jax.random.PRNGKey(seed)`'s elements: a raw threefry key, two uint32 words."""


@calls("jax.random.key", "jax.random.PRNGKey")
def _random_key(call: CallArgs) -> Value | None:
    if call.qualname.endswith(".key"):
        return ArrayV(())
    return ArrayV((Const(2),), _LEGACY_KEY)


@calls("jax.random.split")
def _random_split(call: CallArgs) -> Value | None:
    key = call.get(0, "key")
    count = call.get(1, "num") or Const(2)
    rest = key.shape if isinstance(key, ArrayV) and key.shape is not None else ()
    dtype = key.dtype if isinstance(key, ArrayV) else None
    return ArrayV((*(count.items if isinstance(count, Seq) else (count,)), *rest), dtype)


@attributes(Ref)
def _partition_name(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if attr == "PARTITION_NAME" and isinstance(base, Ref) and base.qualname in ("flax.nnx", "flax.nnx.spmd"):
        return Const(PARTITION_NAME)
    return None


# -- transforms --------------------------------------------------------------------------------


_VMAP_AXES = ("in_axes", "out_axes", "transform_metadata")


@calls("flax.nnx.vmap")
def _vmap(call: CallArgs) -> Value | None:
    return VmapV(
        call.get(None, "in_axes") or Const(0),
        call.get(None, "out_axes") or Const(0),
        call.get(None, "transform_metadata"),
        call.frame.span(call.node),
        func=call.get(0, "f"),
        options=tuple((k, v) for k, v in call.kwargs.items() if k not in _VMAP_AXES),
        origin=call.frame.origin("nnx.vmap", call.node),
    )


@methods(VmapV, "__call__")
def _call_vmap(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`nnx.vmap(f, ...)(x)` over arrays (sharded/nnx_vmapped.py), and the decorator factory
    `nnx.vmap(in_axes=...)` applied to its function."""
    vmap = method.base
    assert isinstance(vmap, VmapV)
    if vmap.func is None:
        return replace(vmap, func=call.args[0]) if len(call.args) == 1 and not call.kwargs else None
    return nnx_vmapped_call(call, vmap)


_CARRY = "flax.nnx.Carry"
_SCAN_AXES = Seq((Ref(_CARRY), Const(0)))
"""`nnx.scan`'s default `in_axes`/`out_axes`: a carry, then one argument (or output) scanned on axis 0."""


@calls("flax.nnx.scan")
def _scan(call: CallArgs) -> Value | None:
    """Layers created in a scanned function are stacked like under `nnx.vmap` (Flax 0.12 creates
    their parameters with a leading axis of `length`, or of the scanned argument's size)."""
    return VmapV(
        call.get(None, "in_axes") or _SCAN_AXES,
        call.get(None, "out_axes") or _SCAN_AXES,
        call.get(None, "transform_metadata"),
        call.frame.span(call.node),
        call.get(None, "length"),
        "nnx.scan",
        origin=call.frame.origin("nnx.scan", call.node),
    )


_BARE_TRANSFORMS = {
    "flax.nnx.vmap": VmapV(Const(0), Const(0), None),
    "flax.nnx.scan": VmapV(_SCAN_AXES, _SCAN_AXES, None, name="nnx.scan"),
}
"""`@nnx.vmap` / `@nnx.scan` written without a call: the transforms with their defaults."""


def bare_transform(written: Value) -> Value:
    """A decorator's value, with `nnx.vmap` / `nnx.scan` written bare read as the transform."""
    return _BARE_TRANSFORMS.get(written.qualname, written) if isinstance(written, Ref) else written


@calls("flax.nnx.transform_metadata")
def _transform_metadata(call: CallArgs) -> Value | None:
    return TransformMetadataV()


@calls("flax.nnx.split_rngs")
def _split_rngs(call: CallArgs) -> Value | None:
    splits = call.get(None, "splits")
    return SplitRngsV(splits) if splits is not None else None


def stacked_context(
    evaluator: Evaluator,
    info: FunctionInfo,
    defined: Frame,
    arguments: Mapping[str, Value],
    outer: Value | None,
    wrapper: Value | None = None,
    wrappers: tuple[Value, ...] = (),
) -> Value | None:
    """The stacking inside `info` when it runs with these arguments: the caller's stacking plus a
    level for each `nnx.vmap`/`nnx.scan` around it (decorators, evaluated in `defined`, the frame
    where the function is defined; `wrapper` for `nnx.vmap(f)(...)`; `wrappers`, outermost first,
    for `nnx.split_rngs(splits=n)(nnx.vmap(f))(...)`).

    The size of a level is `nnx.scan`'s `length`, else the split of the rngs an enclosing
    `nnx.split_rngs(splits=n)` makes, else the leading size of a mapped argument
    (`rngs.fork(split=n)`, `jax.random.split(key, n)`).
    """
    transforms = [*wrappers, *([wrapper] if wrapper is not None else [])]
    transforms += [evaluator.evaluate(d, defined) for d in info.node.decorator_list]
    levels: list[StackLevel] = []
    splits: Value | None = None
    for written in transforms:
        transform = bare_transform(written)
        if isinstance(transform, SplitRngsV):
            splits = _leading(ArrayV(shape_of(transform.splits)))
        elif isinstance(transform, VmapV):
            length = (
                transform.length if transform.length is not None and not is_none(transform.length) else None
            )
            size = length or splits or _mapped_size(info, arguments, transform.in_axes)
            levels.append(_level(transform, size))
    if not levels:
        return outer
    if any(isinstance(transform, TransformMetadataV) for transform in transforms):
        unmodelled = Unknown("the annotation nnx.transform_metadata gives is not modelled")
        levels = [replace(level, has_metadata=True, partition=unmodelled) for level in levels]
    before = outer.levels if isinstance(outer, StackV) else ()
    return StackV(before + tuple(levels))


def _level(vmap: VmapV, size: Value) -> StackLevel:
    """Flax adds the axis to the annotation only when `transform_metadata` has a
    `PARTITION_NAME` entry (`spmd.add_axis`); an unknown mapping may have one."""
    metadata = vmap.transform_metadata
    partition = metadata.get(PARTITION_NAME) if isinstance(metadata, DictV) else None
    if isinstance(metadata, DictV):
        has_metadata = partition is not None
    else:
        has_metadata = metadata is not None and not is_none(metadata)
    where = f"{vmap.name} at line {vmap.span.line + 1}" if vmap.span else vmap.name
    return StackLevel(
        size,
        _out_axis(vmap.out_axes),
        has_metadata,
        partition if partition is not None else Unknown("transform_metadata without partition_name"),
        where,
        vmap.span,
        vmap.name,
    )


def _out_axis(out_axes: Value) -> int:
    """Where the stacked axis goes: `out_axes`, or its mapped entry when it is a tuple with a
    carry (`nnx.scan`'s `(nnx.Carry, 0)`)."""
    entries = out_axes.items if isinstance(out_axes, Seq) else (out_axes,)
    return next((axis for axis in map(as_int, entries) if axis is not None), 0)


def _mapped_size(info: FunctionInfo, arguments: Mapping[str, Value], in_axes: Value) -> Value:
    """The leading size of the first argument `in_axes` maps (0 maps every argument; a carry or
    None maps none)."""
    positional = [a.arg for a in (*info.node.args.posonlyargs, *info.node.args.args)]
    axes = in_axes.items if isinstance(in_axes, Seq) else (in_axes,) * len(positional)
    for name, axis in zip(positional, axes):
        if is_none(axis) or (isinstance(axis, Ref) and axis.qualname == _CARRY):
            continue
        size = _leading(arguments.get(name), as_int(axis) or 0)
        if size is not None:
            return size
    return Unknown("number of stacked layers", symbol="num_layers")


def _leading(value: Value | None, axis: int = 0) -> Value | None:
    """The size along `axis` of split rngs or an array of keys, when it is written down."""
    if isinstance(value, RngsV):
        value = ArrayV(shape_of(value.split)) if value.split is not None else None
    if isinstance(value, ArrayV) and value.shape is not None and axis < len(value.shape):
        return value.shape[axis]
    return None


def is_none(value: Value) -> bool:
    """A literal `None` (an argument given as None counts as not given)."""
    return isinstance(value, Const) and value.value is None
