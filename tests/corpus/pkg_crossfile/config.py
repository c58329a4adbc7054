"""Sizes, mesh and shardings of the package; imported by model.py with `from .config import ...`."""
import dataclasses

from jax.sharding import PartitionSpec as P

MESH_SHAPE = (2, 4)
MESH_AXES = ("fsdp", "tp")
BATCH = "fsdp"


@dataclasses.dataclass(frozen=True)
class Config:
    d_model: int = 128
    d_ff: int = 512
    vocab: int = 1024
    kernel_spec: P = P("fsdp", "tp")

    @classmethod
    def small(cls) -> "Config":
        return cls(d_model=64, d_ff=256)
