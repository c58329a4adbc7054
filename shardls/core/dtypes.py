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
