"""Errors: a dimension the mesh axes do not divide (vocab 50257 over 8), on Auto and Explicit meshes."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

VOCAB = 50257
explicit = jax.make_mesh((2, 4), ("data", "model"))
auto = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))

ok = jax.device_put(jnp.zeros((50264, 16)), NamedSharding(explicit, P(("data", "model"))))  # expect: ok
emb = jax.device_put(jnp.zeros((VOCAB, 16)), NamedSharding(explicit, P(("data", "model"))))  # expect-error: SH001
rows = jax.device_put(jnp.zeros((15, 32)), NamedSharding(auto, P("data")))  # expect-error: SH001
small = jax.device_put(jnp.zeros((2, 32)), NamedSharding(auto, P("model")))  # expect-error: SH001
with jax.set_mesh(explicit):
    created = jnp.zeros((8, 6), out_sharding=P(None, "model"))  # expect-error: SH001
