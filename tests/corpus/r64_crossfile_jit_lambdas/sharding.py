"""Lambda helpers as flax's tests and jax-llm-examples write them (`P = lambda *a:
NamedSharding(mesh, PartitionSpec(*a))`, `_psc = lambda z, spec: ...`) and a helper class
(`self.sharder.put(x, spec)`): each places what its caller passes."""

import jax
from jax.sharding import NamedSharding, PartitionSpec

from .train_lib import mesh

P = lambda *a: NamedSharding(mesh, PartitionSpec(*a))  # noqa: E731
shard = lambda x, *a: jax.device_put(x, NamedSharding(mesh, PartitionSpec(*a)))  # noqa: E731


class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def put(self, x, *names):
        return jax.device_put(x, NamedSharding(self.mesh, PartitionSpec(*names)))
