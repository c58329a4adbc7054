"""d4: config dataclass fields: defaults, derived defaults, classmethod presets, fields computed in `__post_init__`."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass
class ModelConfig:
    emb_dim: int = 256
    num_heads: int = 8
    head_dim: int = 32
    mlp_dim: int = 256 * 4
    vocab_size: int = 1024

    @classmethod
    def tiny(cls) -> "ModelConfig":
        return cls(emb_dim=64, num_heads=4, head_dim=16, mlp_dim=128, vocab_size=512)


@dataclasses.dataclass
class RunConfig:
    mesh_axis_names: tuple = ("data", "model")
    mesh_shape: tuple = (2, 4)
    batch_per_device: int = 4

    def __post_init__(self):
        self.global_batch = self.batch_per_device * 2
        self.mesh = jax.make_mesh(self.mesh_shape, self.mesh_axis_names, axis_types=(AxisType.Explicit,) * 2)


run = RunConfig()
jax.set_mesh(run.mesh)
cfg = ModelConfig()
tiny = ModelConfig.tiny()

embed = jax.device_put(jnp.zeros((cfg.vocab_size, cfg.emb_dim)), P("model", "data"))  # expect: embed
mlp = jax.device_put(jnp.zeros((cfg.emb_dim, cfg.mlp_dim)), P("data", "model"))  # expect: mlp
qkv = jax.device_put(jnp.zeros((tiny.emb_dim, tiny.num_heads, tiny.head_dim)), P(None, "model"))  # expect: qkv
tokens = jax.device_put(jnp.zeros((run.global_batch, 16), jnp.int32), P("data"))  # expect: tokens
