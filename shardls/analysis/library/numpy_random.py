"""numpy's random samplers: `np.random.normal(size=(4, 8))`, `np.random.randn(4, 8)`, and the
`np.random.default_rng(seed)` generator's `normal`/`uniform`/`integers`/`random`, and `choice`
(indices to sample a batch with: `idx = np.random.choice(len(X), size=batch_size)`).

Tests build their inputs this way before placing them (maxtext distillation_metrics_test.py:
`jnp.asarray(rng.normal(size=(b, s, v)).astype(np.float32))`). The result is an array of `size`
(numpy's float64 or int64, narrowed as JAX narrows it without x64); with no `size` numpy returns
a Python scalar, which is not followed.
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of, shape_of
from shardls.analysis.library.registry import calls
from shardls.analysis.values import ArrayV, Const, Ref, Unknown, UnknownInt, Value
from shardls.core import DType, parse_dtype

_GENERATOR = "numpy.random.default_rng()"
"""What `np.random.default_rng(...)` evaluates to; its methods are `<this>.normal` and so on."""

_SIZE_POSITION = {"normal": 2, "uniform": 2, "integers": 2, "randint": 2, "standard_normal": 0, "random": 0}
_SIZE_POSITION.update(random_sample=0, exponential=1, poisson=1, binomial=2, choice=1)
_INTEGER = ("integers", "randint", "poisson", "binomial")


@calls("numpy.random.default_rng")
def _default_rng(call: CallArgs) -> Value | None:
    return Ref(_GENERATOR)


@calls(
    *(f"numpy.random.{name}" for name in _SIZE_POSITION if name != "integers"),
    *(f"{_GENERATOR}.{name}" for name in _SIZE_POSITION if name not in ("randint", "random_sample")),
)
def _sampled(call: CallArgs) -> Value | None:
    name = call.qualname.rsplit(".", 1)[-1]
    shape = shape_of(call.get(_SIZE_POSITION[name], "size"))
    if shape is None:
        return None  # no size: a Python scalar
    if name == "choice":
        return ArrayV(shape, _chosen_dtype(call))
    return ArrayV(shape, _dtype(call, name))


def _chosen_dtype(call: CallArgs) -> DType | None:
    """`choice(a, size)` samples `a`'s elements (an array's dtype), or `range(a)` for an int."""
    population = call.get(0, "a")
    if isinstance(population, ArrayV):
        return population.dtype
    if isinstance(population, UnknownInt) or (isinstance(population, Const) and _is_size(population)):
        return parse_dtype("int64", x64=call.library.environment.x64)
    return None


@calls("numpy.random.rand", "numpy.random.randn")
def _dims(call: CallArgs) -> Value | None:
    """`np.random.randn(4, 8)`: the sizes are the arguments."""
    if not call.args or call.kwargs or not all(_is_size(a) for a in call.args):
        return None
    return ArrayV(tuple(call.args), _dtype(call, "normal"))


def _is_size(value: Value) -> bool:
    """A dimension numpy accepts (an int), or one not known here."""
    return isinstance(value, Unknown) or (
        isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool)
    )


def _dtype(call: CallArgs, name: str) -> DType:
    x64 = call.library.environment.x64
    given = dtype_of(call.get(None, "dtype"), x64=x64)
    if given is not None:
        return given
    return parse_dtype("int64" if name in _INTEGER else "float64", x64=x64)
