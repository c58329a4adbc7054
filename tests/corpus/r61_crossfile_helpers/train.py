"""Cross-file helpers: each call of a helper of sharding_utils.py gets the layout its arguments
make (shapes, mesh and spec from here), through a from-import, a module attribute, the package's
re-export and a helper's own helper. Modelled on tunix's `sharding_utils.shard(x, spec)` calls
from its models, which had no site at all."""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

from . import put as put_again
from . import sharding_utils as su
from .sharding_utils import put, put_batch, shard

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))

w = put(jnp.zeros((16, 64)), mesh, P("data", "model"))  # expect: w
emb = su.put(jnp.zeros((32, 8)), mesh, P("model"))  # expect: emb
act = shard(jnp.ones((8, 12)), mesh, "data", None)  # expect: act
batch = put_batch(jnp.zeros((4, 3)), mesh)  # expect: batch
again = put_again(jnp.zeros((8, 8)), mesh, P(None, "model"))  # expect: again
