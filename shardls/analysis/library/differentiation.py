"""`jax.grad`, `jax.value_and_grad`, `jax.checkpoint` and their Flax NNX forms as values.

These transforms hand the function the arguments it is called with, unchanged (no batching
axis, no per-device blocks), so what they return is known from the function and its arguments:

- `jax.checkpoint(f)(x)` / `jax.remat` / `nnx.remat`: what `f(x)` returns;
- `jax.grad(f, argnums)(x, y)`: a gradient shaped like each differentiated argument (a tuple when
  `argnums` is a tuple), with `f`'s auxiliary output beside it when `has_aux=True`;
- `jax.value_and_grad(f, argnums)(x)`: `(f(x), gradients)`.

The walker also runs the body of `f` with those arguments bound (see
`recognizers/transformed_calls.py`): a loss function reached only through `jax.grad(loss)(...)`
gets the layouts of the arrays it is really given.
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    DictV,
    Seq,
    TransformedV,
    Unknown,
    Value,
)

REMATERIALIZED = ("jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint", "flax.nnx.remat")
"""Transforms whose result is what the function returns."""

DIFFERENTIATED = ("jax.grad", "jax.value_and_grad", "flax.nnx.grad", "flax.nnx.value_and_grad")
"""Transforms whose result holds gradients shaped like the differentiated arguments."""

PASS_THROUGH = (*REMATERIALIZED, *DIFFERENTIATED)
"""Every transform here: the function sees its caller's arguments as they are."""

_FUNCTION_PARAMETERS = ("fun", "f", "fn")
_MAX_NODES = 10_000
_MAX_NESTING = 64


@calls(*PASS_THROUGH)
def _transform(call: CallArgs) -> Value | None:
    func = call.get(0, *_FUNCTION_PARAMETERS)
    if func is None:
        return None  # the decorator-factory form, `partial(jax.checkpoint, policy=...)`
    return BoundMethod(TransformedV(call.qualname, func, call.node), "__call__")


def call_transformed(call: CallArgs, wrapped: TransformedV) -> Value:
    """What calling the transformed function returns (`call` holds the call's arguments)."""
    result = traced_call(call, wrapped)
    if wrapped.api in REMATERIALIZED:
        return result
    found = _transform_options(call, wrapped)
    if found is None:
        return Unknown(f"the arguments of {wrapped.api}() are not known")
    argnums, has_aux = found
    grads = _gradients(call.args, argnums)
    if wrapped.api.endswith("value_and_grad"):
        return Seq((result, grads))  # with has_aux, `result` is already `(value, aux)`
    if not has_aux:
        return grads
    aux = result.items[1] if isinstance(result, Seq) and len(result.items) == 2 else Unknown("aux")
    return Seq((grads, aux))


def _transform_options(call: CallArgs, wrapped: TransformedV) -> tuple[int | tuple[int, ...], bool] | None:
    """`argnums` and `has_aux` of the transform call (`jax.grad(f, argnums=(0, 1), has_aux=True)`)."""
    node = wrapped.node
    evaluator = call.evaluator
    argnums: int | tuple[int, ...] = 0
    has_aux = False
    for keyword in node.keywords:
        if keyword.arg not in ("argnums", "has_aux"):
            continue
        value = evaluator.evaluate(keyword.value, call.frame)
        if keyword.arg == "has_aux":
            if not isinstance(value, Const) or not isinstance(value.value, bool):
                return None
            has_aux = value.value
        elif isinstance(value, Const) and isinstance(value.value, int):
            argnums = value.value
        elif isinstance(value, Seq):
            numbers = [i.value for i in value.items if isinstance(i, Const) and isinstance(i.value, int)]
            if len(numbers) != len(value.items):
                return None
            argnums = tuple(numbers)
        else:
            return None
    if len(node.args) > 1:
        return None  # argnums/has_aux given positionally: rare, left unknown
    return argnums, has_aux


def _gradients(args: list[Value], argnums: int | tuple[int, ...]) -> Value:
    if isinstance(argnums, int):
        if not -len(args) <= argnums < len(args):
            return Unknown("argnums")
        return _Cotangents().of(args[argnums], 0)
    return Seq(tuple(_gradients(args, i) for i in argnums))


class _Cotangents:
    """The cotangent of one argument: the same pytree, each float array of the same shape and
    dtype (a gradient carries no sharding of its own here: JAX's is decided by the compiler).
    A tree shared by reference or nested deeper than the bounds is not followed."""

    def __init__(self) -> None:
        self.nodes_left = _MAX_NODES

    def of(self, value: Value, depth: int) -> Value:
        self.nodes_left -= 1
        if self.nodes_left < 0 or depth > _MAX_NESTING:
            return Unknown("the gradient of a tree too large or too deep")
        if isinstance(value, ArrayV):
            if value.dtype is not None and not value.dtype.name.startswith(("float", "bfloat", "complex")):
                return Unknown("the gradient of an integer array (float0)")
            return ArrayV(value.shape, value.dtype)
        if isinstance(value, Seq):
            return Seq(tuple(self.of(item, depth + 1) for item in value.items))
        if isinstance(value, DictV):
            return DictV(value.keys, tuple(self.of(item, depth + 1) for item in value.values))
        return Unknown("the gradient of a value shardls does not follow")


def traced_call(call: CallArgs, wrapped: TransformedV) -> Value:
    """The transformed function called with the call's arguments: its body is traced, not run."""
    evaluator = call.evaluator
    outside = evaluator.state
    evaluator.tracing = True
    try:
        return evaluator.call(wrapped.func, call.args, call.kwargs, call.node, call.frame)
    finally:
        evaluator.state = outside
