"""r51: in the way of a MaxText test (not named `*_test.py`, so that pytest does not collect
it): the config comes from `configs/base.yml` and the model file `model_name` selects, with
`key=value` overrides and keyword arguments, read by a loader (`pyconfig.initialize`) with
`yaml.safe_load`; the mesh is built from the ICI and DCN parallelism, -1 taking the remaining
devices, and arrays are sharded over it. Every value from a YAML file is an assumption (a run
may override it); the test's own overrides are its code."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from r51_yaml_config import pyconfig


def create_device_mesh(config):
    """Each axis is its ICI size times its DCN size; a -1 takes the devices left."""
    axes = config["mesh_axes"]
    ici = [config[f"ici_{axis}_parallelism"] for axis in axes]
    dcn = [config[f"dcn_{axis}_parallelism"] for axis in axes]
    shape = [i * d if i != -1 else -1 for i, d in zip(ici, dcn)]
    return np.asarray(jax.devices()).reshape(shape)


argv = [None, f"{pyconfig.CONFIGS_DIR}/base.yml", "ici_tensor_parallelism=2"]
cfg = pyconfig.initialize(argv, model_name="tiny", per_device_batch_size=4)
mesh = Mesh(create_device_mesh(cfg), cfg["mesh_axes"])

batch = cfg["per_device_batch_size"] * jax.device_count()
tokens = jax.device_put(  # expect: tokens
    jnp.zeros((batch, cfg["max_target_length"]), jnp.int32), NamedSharding(mesh, P(*cfg["data_sharding"]))
)
embedding = jax.device_put(  # expect: embedding
    jnp.zeros((cfg["vocab_size"], cfg["base_emb_dim"])), NamedSharding(mesh, P("tensor", "fsdp"))
)
mlp = jax.device_put(  # expect: mlp
    jnp.zeros((cfg["base_emb_dim"], cfg["base_mlp_dim"])), NamedSharding(mesh, P("fsdp", "tensor"))
)
