"""b10: specs as fields of a frozen dataclass, with static and class method presets (bonsai/tunix style)."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class ShardConfig:
    emb_vd: P = P("tp", "fsdp")
    q_weight_ndh: P = P("tp", "fsdp", None)
    act_btd: P = P("fsdp", None, "tp")

    @staticmethod
    def no_sharding() -> "ShardConfig":
        return ShardConfig(emb_vd=P(), q_weight_ndh=P(), act_btd=P())

    @classmethod
    def default(cls, use_fsdp: bool) -> "ShardConfig":
        fsdp = "fsdp" if use_fsdp else None
        return cls(emb_vd=P("tp", fsdp), q_weight_ndh=P("tp", fsdp, None), act_btd=P(fsdp, None, "tp"))


mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))
cfg = ShardConfig()
emb = jax.device_put(jnp.zeros((64, 16)), NamedSharding(mesh, cfg.emb_vd))  # expect: emb
q = jax.device_put(jnp.zeros((8, 16, 4)), NamedSharding(mesh, cfg.q_weight_ndh))  # expect: q

none = ShardConfig.no_sharding()
act = jax.device_put(jnp.zeros((2, 4, 8)), NamedSharding(mesh, none.act_btd))  # expect: act

tp_only = ShardConfig.default(use_fsdp=False)
emb2 = jax.device_put(jnp.zeros((64, 16)), NamedSharding(mesh, tp_only.emb_vd))  # expect: emb2
act2 = jax.device_put(jnp.zeros((2, 4, 8)), NamedSharding(mesh, ShardConfig.default(True).act_btd))  # expect: act2
