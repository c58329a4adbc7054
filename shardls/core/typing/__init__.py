"""Sharding in types: what `jax.typeof` says of every array computed from known ones, and the
trace-time errors (ShardingTypeError and friends) JAX raises for them in Explicit mode.

Pure functions over `ShardedType`; each raises `TypeRejected` (a problem with a SH3xx code, or a
core code for a bad spec) where JAX's own rule raises, and `ShapeError` where the call is
malformed before sharding matters.
"""

from shardls.core.typing.activations import ACTIVATIONS, activation
from shardls.core.typing.concatenate import concatenate, lax_concatenate, stack
from shardls.core.typing.contraction import dot, dot_general, einsum, matmul
from shardls.core.typing.elementwise import (
    BINARY_OPS,
    UNARY_OPS,
    binary,
    broadcast_to,
    relu,
    scalar,
    select,
    unary,
    where,
)
from shardls.core.typing.errors import ShapeError, TypeRejected
from shardls.core.typing.index_entries import Index
from shardls.core.typing.indexing import index
from shardls.core.typing.permute import expand_dims, moveaxis, squeeze, swapaxes, transpose
from shardls.core.typing.placement import astype, full_like, reshard
from shardls.core.typing.reductions import CUMULATIVE, REDUCTIONS, arg_reduce, cumulative, reduce
from shardls.core.typing.reshape import reshape
from shardls.core.typing.scatter import UPDATES, scatter
from shardls.core.typing.slicing import dynamic_slice, lax_slice
from shardls.core.typing.sorting import argsort, sort, top_k
from shardls.core.typing.split import array_split, lax_split, split
from shardls.core.typing.take import take, take_along_axis
from shardls.core.typing.types import ShardedType, placed, type_of_layout

__all__ = [
    "ACTIVATIONS",
    "BINARY_OPS",
    "CUMULATIVE",
    "Index",
    "REDUCTIONS",
    "UNARY_OPS",
    "UPDATES",
    "ShapeError",
    "ShardedType",
    "TypeRejected",
    "activation",
    "arg_reduce",
    "argsort",
    "array_split",
    "astype",
    "binary",
    "broadcast_to",
    "concatenate",
    "cumulative",
    "dot",
    "dot_general",
    "dynamic_slice",
    "einsum",
    "expand_dims",
    "full_like",
    "index",
    "lax_concatenate",
    "lax_slice",
    "lax_split",
    "matmul",
    "moveaxis",
    "placed",
    "reduce",
    "relu",
    "reshape",
    "reshard",
    "scalar",
    "scatter",
    "select",
    "sort",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "take",
    "take_along_axis",
    "top_k",
    "transpose",
    "type_of_layout",
    "unary",
    "where",
]
