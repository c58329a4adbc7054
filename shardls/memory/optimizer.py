"""Optimizer state per parameter, as optax allocates it.

The state is counted in each parameter's dtype and sharded like the parameter (what
`optimizer.init` gives under `jit` with the parameters' shardings): optax's `adam`/`adamw`
default `mu_dtype=None` keeps the parameter dtype for both moments, and adafactor's factored
statistics are `zeros_like` slices of the parameter. Step counters (one int32 scalar) are left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shardls.memory.model import Dim, ModelMemory, ParamMemory

ADAFACTOR_MIN_DIM = 128
"""optax.adafactor's `min_dim_size_to_factor`: both factored dimensions must be at least this."""


@dataclass(frozen=True)
class Optimizer:
    name: str
    description: str
    """What is counted, for the report's footnote."""
    full_copies: int = 0
    """State arrays shaped like the parameter (Adam: mu and nu)."""
    factored: bool = False


OPTIMIZERS: dict[str, Optimizer] = {
    "sgd": Optimizer("sgd", "sgd without momentum keeps no state"),
    "momentum": Optimizer(
        "momentum", "sgd with momentum: one trace per parameter, in the parameter dtype", 1
    ),
    "adam": Optimizer(
        "adam", "adam: two moments (mu, nu) per parameter, in the parameter dtype (mu_dtype=None)", 2
    ),
    "adamw": Optimizer(
        "adamw", "adamw: two moments (mu, nu) per parameter, in the parameter dtype (mu_dtype=None)", 2
    ),
    "adafactor": Optimizer(
        "adafactor",
        "adafactor: factored second moments (a row and a column vector) for parameters whose two "
        f"largest dimensions are at least {ADAFACTOR_MIN_DIM}, a full second moment otherwise; no momentum",
        factored=True,
    ),
}


@dataclass(frozen=True)
class OptimizerState:
    optimizer: Optimizer
    total_bytes: int
    bytes_per_device: int


def optimizer_state(model: ModelMemory, optimizer: Optimizer) -> OptimizerState:
    total = per_device = 0
    for param in model.known:
        shapes = _state_shapes(param, optimizer)
        total += param.count * sum(param.dtype.bytes_for(math.prod(g)) for g, _ in shapes)
        per_device += param.count * sum(param.dtype.bytes_for(math.prod(d)) for _, d in shapes)
    return OptimizerState(optimizer, total, per_device)


def _state_shapes(param: ParamMemory, optimizer: Optimizer) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(global shape, per-device shape) of each state array of one parameter copy."""
    shape = _ints(param.shape)
    shard = _ints(param.shard_shape)
    if optimizer.factored:
        return _adafactor(shape, shard)
    return [(shape, shard)] * optimizer.full_copies


def _adafactor(
    shape: tuple[int, ...], shard: tuple[int, ...]
) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """optax `scale_by_factored_rms`: `update`, `v_row`, `v_col` and `v`, each (1,) unless used."""
    one = ((1,), (1,))
    dims = _factored_dims(shape)
    if dims is None:
        return [one, one, one, (shape, shard)]
    d0, d1 = dims
    return [one, (_drop(shape, d0), _drop(shard, d0)), (_drop(shape, d1), _drop(shard, d1)), one]


def _factored_dims(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The two largest axes (optax: `np.argsort(shape)[-2:]`, ties in index order)."""
    if len(shape) < 2:
        return None
    order = sorted(range(len(shape)), key=lambda i: shape[i])
    if shape[order[-2]] < ADAFACTOR_MIN_DIM:
        return None
    return order[-2], order[-1]


def _drop(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return shape[:axis] + shape[axis + 1 :]


def _ints(shape: tuple[Dim, ...]) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)
