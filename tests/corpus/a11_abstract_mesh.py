"""a11: `AbstractMesh` (no devices) with `ShapeDtypeStruct(sharding=...)`, and `use_abstract_mesh`."""
import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh, AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

amesh = AbstractMesh((2, 4), ("data", "model"))
params = jax.ShapeDtypeStruct((1024, 4096), jnp.bfloat16, sharding=NamedSharding(amesh, P("data", "model")))  # expect: params
bias = jax.ShapeDtypeStruct((4096,), jnp.float32, sharding=NamedSharding(amesh, P("model")))  # expect: bias

big = AbstractMesh((16, 16), ("fsdp", "tp"), axis_types=(AxisType.Explicit, AxisType.Explicit))
emb = jax.ShapeDtypeStruct((32000, 4096), jnp.bfloat16, sharding=NamedSharding(big, P("fsdp", "tp")))  # expect: emb

with jax.sharding.use_abstract_mesh(big):
    act = jax.ShapeDtypeStruct((256, 2048), jnp.float32, sharding=NamedSharding(big, P(("fsdp", "tp"))))  # expect: act
