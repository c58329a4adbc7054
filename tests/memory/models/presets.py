"""A model in the style of jax-ml/bonsai's Qwen3: a frozen config with preset classmethods that
go through `cls._from_param(**kwargs)`, which writes a sharding config into `kwargs` when asked;
the sharding specs are fields of that config, built from an Enum's values, and the norms take
their arguments as `**norm_kwargs`."""

import dataclasses
from enum import Enum

from flax import nnx
from jax import P
from jax.sharding import PartitionSpec


class ShardMode(Enum):
    FSDP = "fsdp"
    TP = "tp"


@dataclasses.dataclass(slots=True, frozen=True)
class ShardConfig:
    emb_vd: PartitionSpec | None = None
    ffw_weight_df: PartitionSpec | None = None
    ffw_weight_fd: PartitionSpec | None = None
    decoder_norm: PartitionSpec | None = None

    @staticmethod
    def no_sharding() -> "ShardConfig":
        return ShardConfig()

    @staticmethod
    def default(use_fsdp: bool, use_tp: bool) -> "ShardConfig":
        fsdp = ShardMode.FSDP.value if use_fsdp else None
        tp = ShardMode.TP.value if use_tp else None
        return ShardConfig(
            emb_vd=P(tp, fsdp), ffw_weight_df=P(fsdp, tp), ffw_weight_fd=P(tp, fsdp), decoder_norm=P(tp)
        )


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    num_layers: int
    vocab_size: int
    emb_dim: int
    mlp_dim: int
    shd_cfg: ShardConfig = ShardConfig.no_sharding()

    @classmethod
    def _from_param(cls, use_fsdp: bool = False, use_tp: bool = False, **kwargs: object) -> "ModelConfig":
        if use_fsdp or use_tp:
            kwargs["shd_cfg"] = ShardConfig.default(use_fsdp=use_fsdp, use_tp=use_tp)
        return cls(**kwargs)  # type: ignore[arg-type]

    @classmethod
    def small(cls, use_fsdp: bool = False, use_tp: bool = False) -> "ModelConfig":
        return cls._from_param(use_fsdp, use_tp, num_layers=3, vocab_size=4096, emb_dim=256, mlp_dim=1024)


class Block(nnx.Module):
    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        norm_kwargs = dict(
            num_features=cfg.emb_dim, scale_metadata={"out_sharding": cfg.shd_cfg.decoder_norm}, rngs=rngs
        )
        self.norm = nnx.RMSNorm(**norm_kwargs)
        self.up = nnx.Linear(
            cfg.emb_dim,
            cfg.mlp_dim,
            use_bias=False,
            kernel_metadata={"out_sharding": cfg.shd_cfg.ffw_weight_df},
            rngs=rngs,
        )
        self.down = nnx.Linear(
            cfg.mlp_dim,
            cfg.emb_dim,
            use_bias=False,
            kernel_metadata={"out_sharding": cfg.shd_cfg.ffw_weight_fd},
            rngs=rngs,
        )


class Model(nnx.Module):
    def __init__(self, cfg: ModelConfig, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            cfg.vocab_size, cfg.emb_dim, embedding_metadata={"out_sharding": cfg.shd_cfg.emb_vd}, rngs=rngs
        )
        self.layers = nnx.List([Block(cfg, rngs=rngs) for _ in range(cfg.num_layers)])


def make_model() -> Model:
    return Model(ModelConfig.small(True, True), rngs=nnx.Rngs(0))
