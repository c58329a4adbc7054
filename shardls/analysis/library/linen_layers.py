"""What a Flax Linen layer gives when it is applied: `nn.Dense(8)(x)` is an array of shape
`x.shape[:-1] + (8,)`.

The next layer's input, and so its kernel's shape, is the previous layer's output; without this
every layer after the first would have an input dimension of unknown size. Only the shapes Flax
documents without ambiguity are given (checked with `jax.eval_shape`); a layer whose output
depends on arguments not modelled here (`nn.Conv` with strides or padding, `DenseGeneral` with
`batch_dims`) gives an unknown array.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import dtype_of, shape_of
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.values import ArrayV, BoundMethod, Const, Unknown, Value, as_int

_POSITIONAL = {
    "Dense": ("features",),
    "DenseGeneral": ("features", "axis", "batch_dims"),
    "Embed": ("num_embeddings", "features"),
    "LayerNorm": ("epsilon",),
    "RMSNorm": ("epsilon",),
    "Conv": ("features", "kernel_size", "strides", "padding"),
}


@dataclass(frozen=True)
class LinenLayerV(Value):
    """A Linen layer built with these arguments (by Flax's parameter names), not yet applied."""

    kind: str
    arguments: tuple[tuple[str, Value], ...]

    def get(self, name: str) -> Value | None:
        return next((value for key, value in self.arguments if key == name), None)


@calls(*(f"flax.linen.{kind}" for kind in _POSITIONAL))
def _layer(call: CallArgs) -> Value | None:
    kind = call.qualname.rsplit(".", 1)[-1]
    arguments = dict(zip(_POSITIONAL[kind], call.args))
    arguments.update(call.kwargs)
    return LinenLayerV(kind, tuple(arguments.items()))


@methods(LinenLayerV, "__call__")
def _apply(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    layer = method.base
    x = call.get(0, "inputs")
    if not isinstance(layer, LinenLayerV) or not isinstance(x, ArrayV) or x.shape is None:
        return Unknown("a Linen layer applied to an input of unknown shape")
    dtype = dtype_of(layer.get("dtype"), library.environment.x64) or x.dtype
    shape = _output_shape(layer, x.shape)
    return ArrayV(shape, dtype) if shape is not None else Unknown(f"the output of nn.{layer.kind}")


def _output_shape(layer: LinenLayerV, shape: tuple[Value, ...]) -> tuple[Value, ...] | None:
    kind = layer.kind
    if kind in ("LayerNorm", "RMSNorm"):
        return shape
    if kind == "Embed":
        features = layer.get("features")
        return (*shape, features) if features is not None else None
    if kind == "Dense" or (kind == "Conv" and _same_spatial(layer)):
        features = layer.get("features")
        return (*shape[:-1], features) if features is not None and shape else None
    if kind == "DenseGeneral":
        return _dense_general(layer, shape)
    return None


def _same_spatial(layer: LinenLayerV) -> bool:
    """`nn.Conv` keeps the spatial sizes with its defaults (`strides=1`, `padding='SAME'`, no
    dilation)."""
    for name in ("strides", "input_dilation", "kernel_dilation"):
        value = layer.get(name)
        if value is not None and not (isinstance(value, Const) and value.value in (None, 1)):
            return False
    padding = layer.get("padding")
    return padding is None or (isinstance(padding, Const) and padding.value == "SAME")


def _dense_general(layer: LinenLayerV, shape: tuple[Value, ...]) -> tuple[Value, ...] | None:
    """The input without the contracted `axis` dimensions, then `features`."""
    features = shape_of(layer.get("features"))
    axes = shape_of(layer.get("axis")) or (Const(-1),)
    batch = layer.get("batch_dims")
    indices = [as_int(axis) for axis in axes]
    if features is None or (batch is not None and shape_of(batch) != ()) or None in indices:
        return None
    rank = len(shape)
    contracted = {index % rank for index in indices if index is not None and -rank <= index < rank}
    if len(contracted) != len(indices):
        return None
    return (*(dim for i, dim in enumerate(shape) if i not in contracted), *features)
