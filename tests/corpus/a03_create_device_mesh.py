"""a3: `Mesh(mesh_utils.create_device_mesh(shape), names)`, with a literal and with a named shape."""
import jax
import jax.numpy as jnp
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))
w = jax.device_put(jnp.zeros((64, 128)), NamedSharding(mesh, P("data", "model")))  # expect: w

MESH_SHAPE = (4, 2)
AXES = ("fsdp", "tp")
devices = mesh_utils.create_device_mesh(MESH_SHAPE)
mesh2 = Mesh(devices, axis_names=AXES)
v = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh2, P("tp", "fsdp")))  # expect: v

flat = Mesh(mesh_utils.create_device_mesh((8,), jax.devices()), ("batch",))
b = jax.device_put(jnp.ones((32, 3)), NamedSharding(flat, P("batch")))  # expect: b
