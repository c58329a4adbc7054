"""JAX's dtype promotion (`jax.numpy.result_type`, standard mode, x64 off): the lattice of
`jax._src.dtypes._type_promotion_lattice` and its least upper bound, with weak types.

Sharding does not depend on dtypes, but a sharded type is only right if its dtype is, and
`bfloat16 + int32` or `int32 / 2` is where a hand-written table goes wrong.
"""

from __future__ import annotations

import functools

from shardls.core.dtypes import DType, parse_dtype

_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "int*", "float*", "complex*"
_SMALL_FLOATS = (
    "float4_e2m1fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
)

_LATTICE: dict[str, tuple[str, ...]] = {
    "bool": (_WEAK_INT,),
    _WEAK_INT: ("uint8", "uint2", "uint4", "int8", "int2", "int4"),
    "uint2": (),
    "uint4": (),
    "uint8": ("int16", "uint16"),
    "uint16": ("int32", "uint32"),
    "uint32": ("int32", "uint64"),  # x64 off: no int64 formed from 32-bit inputs
    "uint64": (_WEAK_FLOAT,),
    "int2": (),
    "int4": (),
    "int8": ("int16",),
    "int16": ("int32",),
    "int32": ("int64",),
    "int64": (_WEAK_FLOAT,),
    _WEAK_FLOAT: (*_SMALL_FLOATS, "bfloat16", "float16", _WEAK_COMPLEX),
    **{name: () for name in _SMALL_FLOATS},
    "bfloat16": ("float32",),
    "float16": ("float32",),
    "float32": ("float64", "complex64"),
    "float64": ("complex128",),
    _WEAK_COMPLEX: ("complex64",),
    "complex64": ("complex128",),
    "complex128": (),
}
_WEAK_DEFAULT = {_WEAK_INT: "int32", _WEAK_FLOAT: "float32", _WEAK_COMPLEX: "complex64"}
_WEAK_OF_KIND = {"int": _WEAK_INT, "float": _WEAK_FLOAT, "complex": _WEAK_COMPLEX}


@functools.cache
def _upper_bounds(node: str) -> frozenset[str]:
    found = {node}
    for higher in _LATTICE[node]:
        found |= _upper_bounds(higher)
    return frozenset(found)


def _node(dtype: DType, weak: bool) -> str:
    if not weak:
        return dtype.name
    if dtype.name == "bool":
        return "bool"
    kind = "complex" if dtype.name.startswith("complex") else "float" if "float" in dtype.name else "int"
    return _WEAK_OF_KIND[kind]


def result_type(*operands: tuple[DType, bool]) -> tuple[DType, bool]:
    """`dtypes.result_type(..., return_weak_type_flag=True)` for (dtype, weak_type) operands."""
    nodes = {_node(d, w) for d, w in operands}
    common = frozenset.intersection(*(_upper_bounds(n) for n in nodes))
    (least,) = [c for c in common if common <= _upper_bounds(c)]
    weak = all(w for _, w in operands) or least in _WEAK_DEFAULT
    return parse_dtype(_WEAK_DEFAULT.get(least, least)), weak


def is_floating(dtype: DType) -> bool:
    return "float" in dtype.name


def is_integer(dtype: DType) -> bool:
    return "int" in dtype.name


def is_inexact(dtype: DType) -> bool:
    return is_floating(dtype) or dtype.name.startswith("complex")


BOOL = parse_dtype("bool")
INT32 = parse_dtype("int32")
UINT32 = parse_dtype("uint32")
FLOAT32 = parse_dtype("float32")
