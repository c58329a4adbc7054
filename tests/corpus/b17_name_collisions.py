"""b17: names that collide with P: `P = ParamSpec("P")` for typing, `P = 1`; the real spec is spelled otherwise."""
import functools
from typing import Callable, ParamSpec, TypeVar

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

P = ParamSpec("P")
R = TypeVar("R")


def logged(fn: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return fn(*args, **kwargs)

    return wrapper


@logged
def place(x, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


mesh = jax.make_mesh((2, 4), ("data", "model"))
a = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, PartitionSpec("data", "model")))  # expect: a
b = place(jnp.zeros((8, 8)), PartitionSpec("model"))

P = 1
top_p = P * 0.9
c = jax.device_put(jnp.zeros((4, 8)), NamedSharding(mesh, PartitionSpec(None, "model")))  # expect: c

from jax.sharding import PartitionSpec as P  # noqa: E402 -- P means PartitionSpec again from here

d = jax.device_put(jnp.zeros((4, 8)), NamedSharding(mesh, P("data")))  # expect: d
