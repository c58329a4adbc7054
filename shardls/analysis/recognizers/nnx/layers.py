"""The parameters each Flax NNX layer creates: one shape formula per layer, read from the
constructor's arguments by Flax's parameter names.

Both the sites (`param_sites`) and the model-memory report size layers with these formulas, so
they never disagree; Linen's layers (`recognizers/linen.py`) reuse `ParamDecl` and `LayerArgs`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from shardls.analysis.evaluator import truthiness
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import shape_of
from shardls.analysis.library.nnx import is_none
from shardls.analysis.values import Const, DictV, Unknown, Value


@dataclass(frozen=True)
class ParamDecl:
    """A parameter a layer creates, and the keywords that annotate it (the first one given wins,
    as `out_kernel_init or kernel_init` does in MultiHeadAttention)."""

    name: str
    shape: tuple[Value, ...] | None
    init: tuple[str, ...]
    metadata: tuple[str, ...]


def _param(name: str, shape: tuple[Value, ...] | None, prefix: str = "") -> ParamDecl:
    """`kernel` is annotated by `kernel_init`/`kernel_metadata`, `scale` by `scale_*`, and so on."""
    return ParamDecl(prefix + name, shape, (f"{name}_init",), (f"{name}_metadata",))


@dataclass(frozen=True)
class LayerArgs:
    """A layer constructor's arguments by Flax's parameter names."""

    call: CallArgs
    positional: tuple[str, ...]

    def given(self, name: str) -> Value | None:
        """The argument, positional or keyword; None when absent or given as None."""
        index = self.positional.index(name) if name in self.positional else None
        value = self.call.get(index, name)
        return None if value is None or is_none(value) else value

    def get(self, name: str, default: Value | None = None) -> Value:
        """The argument, else `default`, else a symbol named after the parameter."""
        value = self.given(name) or default
        return value if value is not None else Unknown(f"{name} not given", symbol=name)

    def flag(self, name: str, default: bool) -> bool:
        """A boolean argument; an unknown one counts as True (the parameter may exist)."""
        if name not in self.call.kwargs:
            return default
        return truthiness(self.call.kwargs[name]) is not False

    def dims(self, name: str) -> tuple[Value, ...] | None:
        """An int or a sequence of ints (`kernel_size=3` is 1-D); None when its length is unknown."""
        return shape_of(self.get(name))

    def floordiv(self, left: Value, right: Value) -> Value:
        return self.call.evaluator.binop(ast.FloorDiv, left, right, self.call.node, self.call.frame)


def _biased(
    args: LayerArgs, params: list[ParamDecl], bias: tuple[Value, ...] | None, prefix: str = ""
) -> list[ParamDecl]:
    return params + [_param("bias", bias, prefix)] if args.flag("use_bias", True) else params


def _concat(*parts: tuple[Value, ...] | None) -> tuple[Value, ...] | None:
    if any(part is None for part in parts):
        return None
    return tuple(dim for part in parts if part is not None for dim in part)


def _linear(a: LayerArgs) -> list[ParamDecl]:
    out = a.get("out_features")
    return _biased(a, [_param("kernel", (a.get("in_features"), out))], (out,))


def _embed(a: LayerArgs) -> list[ParamDecl]:
    return [_param("embedding", (a.get("num_embeddings"), a.get("features")))]


def _conv(a: LayerArgs) -> list[ParamDecl]:
    groups = a.get("feature_group_count", Const(1))
    features = (a.floordiv(a.get("in_features"), groups), a.get("out_features"))
    return _biased(a, [_param("kernel", _concat(a.dims("kernel_size"), features))], (a.get("out_features"),))


def _conv_transpose(a: LayerArgs) -> list[ParamDecl]:
    features = (a.get("in_features"), a.get("out_features"))
    if a.flag("transpose_kernel", False):
        features = features[::-1]
    return _biased(a, [_param("kernel", _concat(a.dims("kernel_size"), features))], (a.get("out_features"),))


def _linear_general(a: LayerArgs) -> list[ParamDecl]:
    batch_axis = a.get("batch_axis", DictV((), ()))
    batch = batch_axis.values if isinstance(batch_axis, DictV) else None
    out = a.dims("out_features")
    return _biased(a, [_param("kernel", _concat(batch, a.dims("in_features"), out))], _concat(batch, out))


def _einsum(a: LayerArgs) -> list[ParamDecl]:
    kernel = [_param("kernel", a.dims("kernel_shape"))]
    return kernel + [_param("bias", a.dims("bias_shape"))] if a.given("bias_shape") is not None else kernel


def _norm(a: LayerArgs, has_bias: bool = True) -> list[ParamDecl]:
    features = (a.get("num_features"),)
    scale = [_param("scale", features)] if a.flag("use_scale", True) else []
    return scale + [_param("bias", features)] if has_bias and a.flag("use_bias", True) else scale


def _rms_norm(a: LayerArgs) -> list[ParamDecl]:
    return _norm(a, has_bias=False)


def _attention(a: LayerArgs) -> list[ParamDecl]:
    """q/k/v are LinearGeneral (in, heads, head_dim); `out` maps (heads, head_dim) to out_features
    and shares `kernel_*`/`bias_*` unless `out_kernel_*`/`out_bias_*` are given (reference §4.4)."""
    heads, features = a.get("num_heads"), a.get("in_features")
    kv_heads, kv_features = a.get("num_kv_heads", heads), a.get("in_kv_features", features)
    head_dim = a.floordiv(a.get("qkv_features", features), heads)
    params: list[ParamDecl] = []
    projections = (
        ("query", features, heads),
        ("key", kv_features, kv_heads),
        ("value", kv_features, kv_heads),
    )
    for name, source, count in projections:
        kernel = _param("kernel", (source, count, head_dim), f"{name}.")
        params += _biased(a, [kernel], (count, head_dim), f"{name}.")
    if a.flag("normalize_qk", False):
        params += [
            ParamDecl(f"{n}_ln.scale", (head_dim,), (), (f"{n}_ln_scale_metadata",)) for n in ("query", "key")
        ]
    out = a.get("out_features", features)
    params.append(
        ParamDecl(
            "out.kernel",
            (heads, head_dim, out),
            ("out_kernel_init", "kernel_init"),
            ("out_kernel_metadata", "kernel_metadata"),
        )
    )
    if a.flag("use_bias", True):
        params.append(
            ParamDecl(
                "out.bias", (out,), ("out_bias_init", "bias_init"), ("out_bias_metadata", "bias_metadata")
            )
        )
    return params


@dataclass(frozen=True)
class Layer:
    positional: tuple[str, ...]
    """The constructor's positional parameters, in order."""
    params: Callable[[LayerArgs], list[ParamDecl]]


_FEATURES = ("in_features", "out_features")
_LAYERS: dict[str, Layer] = {
    "Linear": Layer(_FEATURES, _linear),
    "Embed": Layer(("num_embeddings", "features"), _embed),
    "Conv": Layer((*_FEATURES, "kernel_size", "strides"), _conv),
    "ConvTranspose": Layer((*_FEATURES, "kernel_size", "strides"), _conv_transpose),
    "LinearGeneral": Layer(_FEATURES, _linear_general),
    "Einsum": Layer(("einsum_str", "kernel_shape", "bias_shape"), _einsum),
    "LayerNorm": Layer(("num_features",), _norm),
    "RMSNorm": Layer(("num_features",), _rms_norm),
    "BatchNorm": Layer(("num_features",), _norm),
    "GroupNorm": Layer(("num_features", "num_groups", "group_size"), _norm),
    "MultiHeadAttention": Layer(
        ("num_heads", "in_features", "qkv_features", "out_features", "num_kv_heads", "in_kv_features"),
        _attention,
    ),
}


LAYER_NAMES = frozenset(f"flax.nnx.{name}" for name in _LAYERS)


def declared_params(call: CallArgs) -> list[ParamDecl]:
    """The parameters one `flax.nnx.<Layer>(...)` call creates, by its layer's formula."""
    layer = _LAYERS[call.qualname.rsplit(".", 1)[-1]]
    return layer.params(LayerArgs(call, layer.positional))
