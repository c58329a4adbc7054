"""Real code (xlstm-jax `xlstm_jax/distributed/mesh_utils.py` and its tests): a mesh helper that
takes the device array as an optional argument, filling in all devices only when none is given,
called by a test with the first device alone.

`device_array is None` on a device array was not decided, so the helper also reshaped all 8
(assumed) devices into the one-device shape: a false SH105 warning in the helper, and no mesh at
the test's `shard_map`, whose blocks were unknown.
"""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


@dataclass
class ParallelConfig:
    data_axis_size: int = -1
    model_axis_size: int = 1
    data_axis_name: str = "dp"
    model_axis_name: str = "tp"


def initialize_mesh(parallel_config: ParallelConfig, device_array: np.ndarray | None = None) -> Mesh:
    if device_array is None:
        device_array = np.array(jax.devices())
    mesh_shape = (parallel_config.data_axis_size, parallel_config.model_axis_size)
    min_req_devices = np.abs(np.prod(mesh_shape))
    assert device_array.size >= min_req_devices, f"{device_array.size} < {min_req_devices}"
    device_array = device_array.reshape(mesh_shape)
    return Mesh(device_array, (parallel_config.data_axis_name, parallel_config.model_axis_name))


parallel = ParallelConfig(data_axis_size=1, model_axis_size=1)
mesh = initialize_mesh(parallel_config=parallel, device_array=np.array(jax.devices())[0:1])
tokens = jax.device_put(jnp.zeros((4, 16)), NamedSharding(mesh, P("dp")))  # expect: tokens


def embed(tokens_block):
    return tokens_block * 2  # expect: tokens_block


logits = jax.jit(jax.shard_map(embed, mesh=mesh, in_specs=P("dp"), out_specs=P("dp")))(tokens)  # expect: logits

full = initialize_mesh(ParallelConfig(data_axis_size=4, model_axis_size=2))
wide = jax.device_put(jnp.zeros((8, 16)), NamedSharding(full, P("dp", "tp")))  # expect: wide
