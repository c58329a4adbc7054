"""A training library in the style of maxtext's `train.py` (`p_train_step = jax.jit(train_step,
in_shardings=..., out_shardings=...)`) and EasyLM's `@partial(pjit, in_shardings=...)` steps: the
shardings are fixed here, the arrays they meet are main.py's."""

from functools import partial

import jax
from jax.sharding import AxisType, NamedSharding, PartitionSpec

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def train_step(x, w):
    return x @ w


p_train_step = jax.jit(
    train_step,
    in_shardings=(NamedSharding(mesh, PartitionSpec("data")), NamedSharding(mesh, PartitionSpec(None, "model"))),
    out_shardings=NamedSharding(mesh, PartitionSpec("data", "model")),
)


@partial(
    jax.jit,
    in_shardings=NamedSharding(mesh, PartitionSpec("model")),
    out_shardings=NamedSharding(mesh, PartitionSpec("model")),
)
def scale(x):
    return x * 2
