"""The parameters one layer or variable call creates, with their annotations: the single reading
of the call that the sites, the typed layers (`sharded/layers.py`) and the model-memory report
share, so a hover and a whole-model total never disagree."""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of
from shardls.analysis.recognizers.nnx.annotations import (
    Annotation,
    created_sharded_annotation,
    layer_annotation,
    param_annotation,
)
from shardls.analysis.recognizers.nnx.layers import declared_params
from shardls.analysis.values import ArrayV, Const, Value
from shardls.core import DType


@dataclass(frozen=True)
class LayerParam:
    """A parameter a layer call creates, as the site builder and the model-memory report read it."""

    name: str
    shape: tuple[Value, ...] | None
    dtype: DType | None
    """`param_dtype` as written; None when not given (Flax then uses float32)."""
    annotation: Annotation | None


def layer_params(call: CallArgs) -> list[LayerParam]:
    """Every parameter of one `flax.nnx.<Layer>(...)` call, annotated or not: the one shape
    formula per layer that sites and whole-model totals share."""
    dtype = dtype_of(call.get(None, "param_dtype"), call.library.environment.x64)
    return [
        LayerParam(decl.name, decl.shape, dtype, layer_annotation(call, decl))
        for decl in declared_params(call)
    ]


def variable_param(call: CallArgs) -> LayerParam:
    """`nnx.Param(value, ...)`: the value's shape and dtype, and the metadata's annotation (or
    the sharding the value was created with)."""
    value = call.get(0, "value")
    array = value if isinstance(value, ArrayV) else ArrayV(() if isinstance(value, Const) else None)
    annotation = param_annotation(call)
    if annotation is None and array.sharding is not None:
        annotation = created_sharded_annotation(array.sharding, "", call, existing=array.placed)
    return LayerParam("", array.shape, array.dtype, annotation)
