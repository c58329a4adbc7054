"""Cross-file: the config, the mesh shape and a re-exported P come from sibling modules of the package."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding

from . import layers as model_lib
from .config import BATCH, MESH_AXES, MESH_SHAPE, Config

mesh = jax.make_mesh(MESH_SHAPE, MESH_AXES)
cfg = Config.small()
w_in = jax.device_put(jnp.zeros((cfg.d_model, cfg.d_ff)), NamedSharding(mesh, cfg.kernel_spec))  # expect: w_in
emb = jax.device_put(jnp.zeros((cfg.vocab, cfg.d_model)), NamedSharding(mesh, model_lib.P("tp")))  # expect: emb
x = jax.device_put(jnp.zeros((16, Config().d_model)), NamedSharding(mesh, jax.sharding.PartitionSpec(BATCH)))  # expect: x
