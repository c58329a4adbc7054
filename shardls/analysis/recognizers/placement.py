"""Where an array gets a layout: `device_put`, `with_sharding_constraint`, `reshard`, creation
with `out_sharding=`/`device=` (initializers included), operations with `out_sharding=` (`einsum`,
`dot`, `matmul`, `x.at[...].get`), `ShapeDtypeStruct(sharding=)`, and `NamedSharding` itself."""

from __future__ import annotations

import ast

from shardls.analysis.facts import SiteKind, Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of, shape_of, sharding_of
from shardls.analysis.library.nnx_tree import EVERY_KIND, FlaxLayerV, TreeBuilder
from shardls.analysis.library.nnx_variables import VariableV
from shardls.analysis.library.operations import IndexedV
from shardls.analysis.recognizers.equivalence import compared_rank
from shardls.analysis.recognizers.sharding_pairs import Argument, pair_tree
from shardls.analysis.recognizers.wrapped import pair_span
from shardls.analysis.sharded.layers import LayerV
from shardls.analysis.site_facts import shape_reason
from shardls.analysis.sites import SiteBuilder, method_name, recognizes
from shardls.analysis.values import ArrayV, BoundMethod, DictV, InstanceV, Seq, ShardingV, Value, options
from shardls.analysis.walker import Visit
from shardls.analysis.walking.contexts import ASSUMED_UNDER_JIT
from shardls.core import UsageContext

MAX_TREE_SITES = 256
"""The nodes a placed pytree may have: one site per array, so at most this many sites."""

_CREATION = (
    "jax.numpy.zeros",
    "jax.numpy.ones",
    "jax.numpy.empty",
    "jax.numpy.full",
    "jax.numpy.zeros_like",
    "jax.numpy.ones_like",
    "jax.numpy.arange",
    "jax.random.normal",
    "jax.random.uniform",
    "jax.random.truncated_normal",
    "jax.random.bernoulli",
    "jax.random.randint",
)


def _place(
    builder: SiteBuilder,
    visit: Visit,
    call: CallArgs,
    kind: SiteKind,
    usage: UsageContext,
    array: Value | None,
    target: Value | None,
    assumptions: tuple[str, ...] = (),
    argument: tuple[int, str] | None = (0, "x"),
) -> None:
    """One site for an array and its sharding; for pytrees (`jax.device_put(params, shardings)`,
    a tuple of arrays with one sharding), one per array, each with the sharding JAX gives it: the
    shardings tree is a prefix of the arrays' tree, a leaf applying to every array below it
    (a tree of more than `MAX_TREE_SITES` nodes gives none: one shared by reference can be huge).
    `argument` is where the array is passed (its
    name names the site when the result is not assigned), None when no argument is the array."""
    array = _module_tree(call, array)
    if (sharding_of(target) is None and isinstance(target, (Seq, DictV))) or isinstance(array, (Seq, DictV)):
        if _too_large(array) or _too_large(target):
            return
        span = call.frame.span(call.node)
        label = visit.target or _argument_name(call, argument) or ""
        node = call.arg_node(*argument) if argument is not None else None
        unpacked = _unpacked_names(visit)
        for pair in pair_tree(target, None, Argument(array, node, label)) if target is not None else ():
            where = pair_span(call.frame, pair, span)
            name = _leaf_name(pair.label, unpacked) or label or None
            _place_one(builder, visit, call, kind, usage, pair.value, pair.spec, assumptions, where, name)
        return
    name = visit.target or _argument_name(call, argument)
    _place_one(
        builder, visit, call, kind, usage, array, target, assumptions, call.frame.span(call.node), name
    )


def _module_tree(call: CallArgs, value: Value | None) -> Value | None:
    """An NNX module placed whole (flax spmd_test.py `emb = reshard(emb, P("X"))`, `model =
    reshard(model, P(None, None))`): a module is a pytree whose leaves are its variables' arrays,
    so JAX places each of them; they are the tree `nnx.state(module)` has. Any other value (an
    instance of a class that is not a module included) is returned as it is."""
    if not isinstance(value, (FlaxLayerV, LayerV, InstanceV)):
        return value
    tree = TreeBuilder(call.evaluator, call.frame, EVERY_KIND).state(value)
    return tree if isinstance(tree, DictV) else value


def _too_large(tree: Value | None) -> bool:
    """Whether a pytree has more than `MAX_TREE_SITES` nodes (counted up to that many)."""
    left = MAX_TREE_SITES
    stack = [tree]
    while stack:
        node = stack.pop()
        left -= 1
        if left < 0:
            return True
        if isinstance(node, Seq):
            stack.extend(node.items)
        elif isinstance(node, DictV):
            stack.extend(node.values)
    return False


def _unpacked_names(visit: Visit) -> tuple[str, ...]:
    """`a, b = jax.device_put((x, y), s)`: the names the placed tuple is unpacked into."""
    statement = visit.statement
    if (
        not isinstance(statement, ast.Assign)
        or statement.value is not visit.call
        or len(statement.targets) != 1
    ):
        return ()
    target = statement.targets[0]
    if not isinstance(target, ast.Tuple) or not all(isinstance(e, ast.Name) for e in target.elts):
        return ()
    return tuple(e.id for e in target.elts if isinstance(e, ast.Name))


def _leaf_name(path: str, unpacked: tuple[str, ...]) -> str:
    """A leaf's name: its path (`params['w']`), or the name its tuple item is unpacked into."""
    if unpacked and path.startswith("["):
        index, _, rest = path[1:].partition("]")
        if index.isdigit() and int(index) < len(unpacked):
            return unpacked[int(index)] + rest
    return path


def _place_one(
    builder: SiteBuilder,
    visit: Visit,
    call: CallArgs,
    kind: SiteKind,
    usage: UsageContext,
    array: Value | None,
    target: Value | None,
    assumptions: tuple[str, ...],
    span: Span,
    name: str | None,
) -> None:
    sharding = sharding_of(target)
    if sharding is None:
        return
    if isinstance(array, VariableV):  # an NNX variable is a pytree around its array
        array = array.value
    mesh = builder.select_mesh(sharding, visit, usage, sharding.spec.span or span)
    shape = shape_of(array) if isinstance(array, ArrayV) else None
    dtype = array.dtype if isinstance(array, ArrayV) else None
    builder.add_layout(
        kind,
        visit,
        span,
        name,
        sharding.spec,
        shape,
        dtype,
        usage,
        mesh,
        assumptions=assumptions,
        shape_reason=shape_reason(array),
        sharding=sharding,
    )


def _library_result(call: CallArgs) -> Value | None:
    """The call's value as the library computes it, with the arguments this visit chose."""
    return call.library.call(call.evaluator, call.qualname, call.args, call.kwargs, call.node, call.frame)


def _method_result(call: CallArgs) -> Value | None:
    """The value of a library method's call (`x.at[0:4].get(...)`)."""
    method = call.evaluator.evaluate(call.node.func, call.frame)
    for option in options(method):
        if isinstance(option, BoundMethod):
            return call.library.method(call.evaluator, option, call.args, call.kwargs, call.node, call.frame)
    return None


def _argument_name(call: CallArgs, argument: tuple[int, str] | None = (0, "x")) -> str | None:
    node = call.arg_node(*argument) if argument is not None else None
    return node.id if isinstance(node, ast.Name) else None


@recognizes("jax.device_put")
def device_put(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    _place(
        builder,
        visit,
        call,
        SiteKind.DEVICE_PUT,
        UsageContext.DEVICE_PUT,
        call.get(0, "x"),
        call.get(1, "device"),
    )


_FROM_HOST_DATA: dict[str, tuple[SiteKind, UsageContext, int, tuple[int, str] | None]] = {
    "jax.make_array_from_callback": (SiteKind.CREATION, UsageContext.SHARD_SHAPE, 1, None),
    "jax.make_array_from_single_device_arrays": (SiteKind.CREATION, UsageContext.SHARD_SHAPE, 1, None),
    "jax.make_array_from_process_local_data": (
        SiteKind.DEVICE_PUT,
        UsageContext.DEVICE_PUT,
        0,
        (1, "local_data"),
    ),
}
"""Per function: its site kind, the check JAX makes, where the sharding is, where the array is."""


@recognizes(*_FROM_HOST_DATA)
def from_host_data(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`make_array_from_callback(shape, sharding, callback)`: JAX asks the sharding for each
    device's index into `shape` (`devices_indices_map`), so it checks what `shard_shape` checks:
    an indivisible dimension or an extra sharded entry fails, `P.UNCONSTRAINED` needs an Auto axis.
    `make_array_from_single_device_arrays(shape, sharding, arrays)` checks each array against the
    sharding's `shard_shape(shape)`, which checks the same first.
    `make_array_from_process_local_data(sharding, local_data, global_shape=None)`: on one process
    JAX device_puts the local data (a shape taken from it rests on there being one process)."""
    kind, usage, sharding, argument = _FROM_HOST_DATA[call.qualname]
    target = call.get(sharding, "sharding")
    _place(builder, visit, call, kind, usage, _library_result(call), target, argument=argument)


@recognizes("jax.lax.with_sharding_constraint")
def with_sharding_constraint(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    if visit.context.inside_jit or visit.context.inside_function:
        usage = UsageContext.WSC
        notes = () if visit.context.inside_jit else (ASSUMED_UNDER_JIT,)
    else:
        usage, notes = UsageContext.WSC_EAGER, ("at module level: runs eagerly (outside jit)",)
    _place(
        builder, visit, call, SiteKind.CONSTRAINT, usage, call.get(0, "x"), call.get(1, "shardings"), notes
    )


@recognizes("jax.sharding.reshard")
def reshard(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    _place(
        builder,
        visit,
        call,
        SiteKind.RESHARD,
        UsageContext.RESHARD,
        call.get(0, "x"),
        call.get(1, "out_shardings"),
    )


@recognizes(*_CREATION)
def creation(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    out_sharding = call.get(None, "out_sharding")
    device = call.get(None, "device")
    if out_sharding is None and device is None:
        return
    array = _library_result(call)
    usage = UsageContext.RESHARD if out_sharding is not None else UsageContext.DEVICE_PUT
    _place(builder, visit, call, SiteKind.CREATION, usage, array, out_sharding or device)


_INITIALIZERS = (
    "flax.nnx.initializers.Initializer",
    *(
        f"{module}.{name}"
        for module in ("flax.nnx.initializers", "jax.nn.initializers", "flax.linen.initializers")
        for name in ("zeros", "ones")
    ),
)
"""What library/nnx.py makes of `he_normal()` and the like, and the initializers used directly."""


@recognizes(*_INITIALIZERS)
def initializer(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`init(key, shape, dtype, out_sharding)`: JAX creates the array already laid out."""
    target = call.get(3, "out_sharding")
    if target is not None:
        _place(builder, visit, call, SiteKind.CREATION, UsageContext.RESHARD, _library_result(call), target)


@recognizes("jax.numpy.einsum", "jax.numpy.dot", "jax.numpy.matmul")
def product(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`jnp.einsum(..., out_sharding=P(...))`: the result is laid out as given (Explicit axes only)."""
    target = call.get(None, "out_sharding")
    if target is not None:
        _place(builder, visit, call, SiteKind.RESHARD, UsageContext.RESHARD, _library_result(call), target)


@recognizes(method_name(IndexedV, "get"))
def indexed_get(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`x.at[0:4].get(out_sharding=P(...))`: the selected elements, laid out as given."""
    target = call.get(None, "out_sharding")
    if target is not None:
        _place(builder, visit, call, SiteKind.RESHARD, UsageContext.RESHARD, _method_result(call), target)


@recognizes("jax.ShapeDtypeStruct")
def shape_dtype_struct(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    target = call.get(None, "sharding")
    if target is None:
        return
    shape = call.get(0, "shape")
    dtype = dtype_of(call.get(1, "dtype"))
    _place(
        builder,
        visit,
        call,
        SiteKind.SHAPE_DTYPE_STRUCT,
        UsageContext.ABSTRACT,
        ArrayV(shape_of(shape), dtype),
        target,
    )


@recognizes("jax.sharding.NamedSharding", nested=False)
def named_sharding(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """A NamedSharding on its own (`sharding = NamedSharding(mesh, P(...))`, or passed to a call
    no recognizer handles, `put(x, NamedSharding(...))`): its spec meets its mesh here, and what
    JAX rejects at construction is reported here, where it raises. Inside a recognised call
    (`device_put(x, NamedSharding(...))`) that call's site already says everything, with the
    shape."""
    value = _library_result(call)
    if not isinstance(value, ShardingV) or value.mesh is None:
        return
    span = call.frame.span(call.node)
    mesh = builder.select_mesh(value, visit, UsageContext.SHARD_SHAPE, span)
    compared = compared_rank(visit, call, value)
    builder.add_layout(
        SiteKind.NAMED_SHARDING,
        visit,
        span,
        visit.target,
        value.spec,
        None if compared is None else compared[0],
        None,
        UsageContext.SHARD_SHAPE,
        mesh,
        assumptions=() if compared is None else (compared[1],),
    )
