"""Placement helpers in the style of tunix's `sharding_utils.shard` and maxtext's `sharding.py`:
each builds its sharding from its parameters, so the layout is decided by each caller's arguments
(train.py's calls), not here."""

import jax
from jax.sharding import NamedSharding, PartitionSpec


def put(x, mesh, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


def shard(x, mesh, *names):
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, PartitionSpec(*names)))


def put_batch(x, mesh):
    return put(x, mesh, PartitionSpec("data"))
