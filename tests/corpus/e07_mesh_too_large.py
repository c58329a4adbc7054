"""Errors: a mesh that needs more devices than there are (8), or a device mesh of the wrong size."""
import jax
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import Mesh

fits = jax.make_mesh((2, 4), ("data", "model"))
too_big = jax.make_mesh((4, 4), ("data", "model"))  # expect-error: SH104
too_big_flat = jax.make_mesh((16,), ("fsdp",))  # expect-error: SH104
wrong_count = Mesh(mesh_utils.create_device_mesh((4,)), ("data",))  # expect-error: SH105
wrong_reshape = Mesh(np.array(jax.devices()).reshape(3, 3), ("a", "b"))  # expect-error: SH105
