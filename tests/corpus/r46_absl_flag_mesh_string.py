"""r46: mesh and sizes from absl flag defaults, the mesh given as a string the code parses
(EasyLM's `mesh_dim='1,-1,1'` read by `get_jax_mesh`, maxtext's `examples/shardings.py` reading
`flags.FLAGS`); the runner passes no flags, so every value is its default."""
import jax
import jax.numpy as jnp
import numpy as np
from absl import flags
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

FLAGS = flags.FLAGS
flags.DEFINE_string("mesh_dim", "1,-1,2", "dp,fsdp,mp sizes; -1 takes the remaining devices")
_NAMED_MESH = flags.DEFINE_string("named_mesh", "data:2, model:4", "axis:size pairs")
flags.DEFINE_integer("emb_dim", 512, "embedding width")
flags.DEFINE_integer("vocab_size", "1000", "absl parses a string default as the flag's type")
flags.DEFINE_list("batch_dims", "16, 8", "a list flag's string default is comma-separated")
flags.DEFINE_multi_integer("heads", 4, "a single default of a multi flag is a list of one")
FLAGS.mark_as_parsed()


def get_jax_mesh(axis_dims, names):
    if axis_dims.startswith("!"):
        axis_dims = axis_dims[1:]
    if ":" in axis_dims:
        raise ValueError("named sizes are read by named_mesh below")
    dims = [int(x) for x in axis_dims.split(",")]
    mesh_shape = np.arange(jax.device_count()).reshape(dims).shape
    return Mesh(mesh_utils.create_device_mesh(mesh_shape), names)


mesh = get_jax_mesh(FLAGS.mesh_dim, ("dp", "fsdp", "mp"))
embedding = jax.device_put(  # expect: embedding
    jnp.zeros((FLAGS.vocab_size, FLAGS.emb_dim)), NamedSharding(mesh, P("fsdp", "mp"))
)

sizes = {}
for pair in _NAMED_MESH.value.split(","):
    name, _, size = pair.strip().partition(":")
    sizes[name] = int(size)
named_dims = dict(pair.strip().split(":") for pair in _NAMED_MESH.value.split(","))
mesh2 = jax.make_mesh((int(named_dims["data"]), int(named_dims["model"])), ("data", "model"))
batch_shape = tuple(int(d) for d in FLAGS.batch_dims)
tokens = jax.device_put(jnp.zeros(batch_shape), NamedSharding(mesh2, P("data", "model")))  # expect: tokens
heads = jax.device_put(jnp.zeros((FLAGS.heads[0] * 2, 8)), NamedSharding(mesh2, P("model")))  # expect: heads
