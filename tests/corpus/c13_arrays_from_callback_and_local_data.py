"""Arrays made already sharded from host data: `make_array_from_callback` and
`make_array_from_process_local_data`.

tunix models/dummy_model_creator.py: `jax.make_array_from_callback(shape, shard, _callback)`;
maxtext utils/lora_utils.py: `jax.make_array_from_callback(val.shape, sharding_spec, lambda idx: val[idx])`;
flax examples/gemma/input_pipeline_tf.py: `jax.make_array_from_process_local_data(data_sharding, value)`.
The callback's global shape is its first argument, checked as `shard_shape` checks it (an extra
entry that shards nothing passes, `P.UNCONSTRAINED` passes on an Auto axis); on one process the
local data is the whole array and is checked as `device_put` checks it.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
host = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)
sharding = NamedSharding(mesh, P("data", "model"))

weights = jax.make_array_from_callback((8, 12), sharding, lambda index: host[index])  # expect: weights
copied = jax.make_array_from_callback(host.shape, sharding, lambda idx: host[idx])  # expect: copied
free = jax.make_array_from_callback(
    (8, 12), NamedSharding(auto, P(P.UNCONSTRAINED, "model")), lambda idx: host[idx]
)  # expect: free
ids = jax.make_array_from_callback(
    (16,), NamedSharding(mesh, P("model")), lambda idx: np.zeros(16, np.int32)[idx], dtype=jnp.int32
)  # expect: ids
flat = jax.make_array_from_callback(
    (16,), NamedSharding(mesh, P(None, None)), lambda idx: host.ravel()[:16][idx]
)  # expect-warning: SH002

batch = jax.make_array_from_process_local_data(sharding, host)  # expect: batch
tokens = jax.make_array_from_process_local_data(
    NamedSharding(mesh, P("data")), np.zeros((4, 6), np.int32), (4, 6)
)  # expect: tokens

odd = jax.make_array_from_callback((5, 12), sharding, lambda idx: host[:5][idx])  # expect-error: SH001
rows = jax.make_array_from_process_local_data(sharding, host[:5], (5, 12))  # expect-error: SH001
pinned = jax.make_array_from_callback(
    (8, 12), NamedSharding(mesh, P(P.UNCONSTRAINED)), lambda idx: host[idx]
)  # expect-error: SH006
keyed = jax.make_array_from_process_local_data(
    NamedSharding(auto, P(P.UNCONSTRAINED)), host, (8, 12)
)  # expect-error: SH008
