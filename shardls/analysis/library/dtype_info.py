"""`jnp.finfo(dtype)` and `jnp.iinfo(dtype)`: the limits of a dtype, as numbers.

Real code adds them to arrays (`amax / 127.0 + jnp.finfo(scale_dtype).tiny` in jax-llm-examples'
`_simple_quantize`); unknown, the sum would lose the array's shape. The values are the IEEE and
two's-complement limits, the same on every platform, so they are facts, not assumptions.
"""

from __future__ import annotations

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import dtype_of
from shardls.analysis.library.registry import attributes, calls
from shardls.analysis.values import Const, Ref, Value

_FLOATS: dict[str, dict[str, float | int]] = {
    "float16": {"eps": 2.0**-10, "tiny": 2.0**-14, "max": 65504.0, "bits": 16},
    "bfloat16": {"eps": 2.0**-7, "tiny": 2.0**-126, "max": 3.3895313892515355e38, "bits": 16},
    "float32": {"eps": 2.0**-23, "tiny": 2.0**-126, "max": 3.4028234663852886e38, "bits": 32},
    "float64": {"eps": 2.0**-52, "tiny": 2.0**-1022, "max": 1.7976931348623157e308, "bits": 64},
}
for _limits in _FLOATS.values():
    _limits["min"] = -_limits["max"]
    _limits["smallest_normal"] = _limits["tiny"]

_INTS = {f"{sign}int{bits}": bits for bits in (8, 16, 32, 64) for sign in ("", "u")}

_PREFIX = {"finfo": "jax.numpy.finfo(", "iinfo": "jax.numpy.iinfo("}


@calls("jax.numpy.finfo", "numpy.finfo", "jax.numpy.iinfo", "numpy.iinfo")
def _info(call: CallArgs) -> Value | None:
    """A reference to the limits of one dtype (`jax.numpy.finfo(float16)`), read by attribute."""
    kind = call.qualname.rsplit(".", 1)[-1]
    dtype = dtype_of(call.get(0, "dtype", "int_type"), x64=call.library.environment.x64)
    known = _FLOATS if kind == "finfo" else _INTS
    if dtype is None or dtype.name not in known:
        return None
    return Ref(f"{_PREFIX[kind]}{dtype.name})")


@attributes(Ref)
def _limit(library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame) -> Value | None:
    if not isinstance(base, Ref) or not base.qualname.endswith(")"):
        return None
    for kind, prefix in _PREFIX.items():
        if base.qualname.startswith(prefix):
            name = base.qualname[len(prefix) : -1]
            value = _FLOATS[name].get(attr) if kind == "finfo" else _int_limit(name, attr)
            return Const(value) if value is not None else None
    return None


def _int_limit(name: str, attr: str) -> int | None:
    bits = _INTS[name]
    signed = not name.startswith("u")
    limits = {
        "bits": bits,
        "min": -(2 ** (bits - 1)) if signed else 0,
        "max": 2 ** (bits - 1) - 1 if signed else 2**bits - 1,
    }
    return limits.get(attr)
