"""Element sizes of JAX dtypes as they are laid out on a device.

Sizes are kept in bits because XLA packs the 4-bit and 2-bit types (numpy's itemsize of 1 byte
would overstate them 2x and 4x). 64-bit types are narrowed to 32 bits unless x64 is enabled,
as JAX does by default.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.core.suggest import did_you_mean

_BITS: dict[str, int] = {
    "bool": 8,
    "int2": 2,
    "uint2": 2,
    "int4": 4,
    "uint4": 4,
    "float4_e2m1fn": 4,
    "int8": 8,
    "uint8": 8,
    "float8_e4m3fn": 8,
    "float8_e5m2": 8,
    "float8_e4m3fnuz": 8,
    "float8_e5m2fnuz": 8,
    "float8_e4m3b11fnuz": 8,
    "float8_e4m3": 8,
    "float8_e3m4": 8,
    "float8_e8m0fnu": 8,
    "int16": 16,
    "uint16": 16,
    "float16": 16,
    "bfloat16": 16,
    "int32": 32,
    "uint32": 32,
    "float32": 32,
    "int64": 64,
    "uint64": 64,
    "float64": 64,
    "complex64": 64,
    "complex128": 128,
}

_ALIASES: dict[str, str] = {
    "bool_": "bool",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "c64": "complex64",
    "c128": "complex128",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "float": "float32",
    "int": "int32",
    "complex": "complex64",
}

_NARROWED_WITHOUT_X64: dict[str, str] = {
    "float64": "float32",
    "int64": "int32",
    "uint64": "uint32",
    "complex128": "complex64",
}


@dataclass(frozen=True)
class DType:
    """A canonical JAX dtype; `requested` remembers what the user wrote when x64 narrowed it."""

    name: str
    bits: int
    requested: str | None = None

    def __hash__(self) -> int:
        return hash(self.name) ^ self.bits

    def bytes_for(self, elements: int) -> int:
        """Bytes taken by `elements` packed values (sub-byte types round up to whole bytes)."""
        return -(-elements * self.bits // 8)


def known_dtype_names() -> tuple[str, ...]:
    return tuple(_BITS)


def parse_dtype(text: str, *, x64: bool = False) -> DType:
    """Resolve `jnp.bfloat16`, `"bf16"`, `np.float32`, ... to a DType; raises ValueError if unknown."""
    name = text.strip().rsplit(".", 1)[-1].strip("'\"")
    name = _ALIASES.get(name, name)
    if name not in _BITS:
        raise ValueError(
            f"unknown dtype {text!r}{did_you_mean(name, [*_BITS, *_ALIASES])}; known: {', '.join(_BITS)}"
        )
    if not x64 and name in _NARROWED_WITHOUT_X64:
        narrowed = _NARROWED_WITHOUT_X64[name]
        return DType(narrowed, _BITS[narrowed], requested=name)
    return DType(name, _BITS[name])


FLOAT32 = DType("float32", 32)


def _kind(dtype: DType) -> str:
    """bool, int, uint or other (floating and complex types keep their dtype in every rule below)."""
    if dtype.name == "bool":
        return "bool"
    if dtype.name.startswith("uint"):
        return "uint"
    return "int" if dtype.name.startswith("int") else "other"


def accumulated(dtype: DType, *, x64: bool, numpy: bool) -> DType:
    """The dtype of a sum or product (`sum`, `prod`, `nansum`): JAX widens bool and integers
    narrower than its default integer to that integer (unsigned ones to its unsigned), so a count
    of `True`s is not a bool; numpy widens them to 64 bits, which JAX narrows again on the device
    without x64."""
    kind = _kind(dtype)
    if kind == "other":
        return dtype
    width = 64 if numpy or x64 else 32
    if kind != "bool" and dtype.bits >= width:
        return dtype
    return parse_dtype(f"{'uint' if kind == 'uint' else 'int'}{width}", x64=x64)


def cumulated(dtype: DType, *, x64: bool, numpy: bool) -> DType:
    """The dtype of `cumsum`/`cumprod`: numpy's as a sum's; JAX widens only bool (to its default
    integer) and keeps every integer type (`jnp.cumsum` of int8 is int8)."""
    if numpy:
        return accumulated(dtype, x64=x64, numpy=True)
    return default_int(x64=x64) if _kind(dtype) == "bool" else dtype


def inexact(dtype: DType, *, x64: bool, numpy: bool, ufunc: bool) -> DType:
    """The dtype of a function that gives non-integers (`mean`, `var`, `exp`, `sqrt`, ...) of a
    bool or integer operand: JAX gives float32 up to 32-bit integers (also with x64) and float64
    for 64-bit ones; numpy's reductions give float64, its ufuncs the smallest float that holds the
    operand (float16 for 8 bits, float32 for 16, float64 above); JAX narrows float64 on the
    device without x64."""
    if _kind(dtype) == "other":
        return dtype
    if numpy:
        bits = 64 if not ufunc or dtype.bits > 16 else (16 if dtype.bits <= 8 else 32)
    else:
        bits = 32 if dtype.bits <= 32 else 64
    return parse_dtype(f"float{bits}", x64=x64)


def default_int(*, x64: bool) -> DType:
    """JAX's default integer (`argmax`'s result, the count a `cumsum` of bools gives)."""
    return parse_dtype("int64" if x64 else "int32", x64=x64)
