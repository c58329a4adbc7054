"""r52: a YAML config beside the program found with pathlib (`Path(__file__).resolve().parent /
name`), read at module level with `yaml.load(..., Loader=yaml.SafeLoader)` from `read_text()` and
with `yaml.safe_load` from `path.open()`; the mesh is the mapping of axis names to sizes, and the
layers share sizes through an anchor and merge keys (a key written beside `<<:` wins). Every value
is an assumption of the file (a run may override it)."""
from pathlib import Path

import jax
import jax.numpy as jnp
import yaml
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

CONFIG = Path(__file__).resolve().parent / "r52_pathlib_yaml.yml"
cfg = yaml.load(CONFIG.read_text(), Loader=yaml.SafeLoader)
with CONFIG.open() as f:
    layers = yaml.safe_load(f)["layers"]

mesh = jax.make_mesh(tuple(cfg["mesh"].values()), tuple(cfg["mesh"].keys()))
embed = layers["embed"]
table = jax.device_put(  # expect: table
    jnp.zeros((embed["vocab"], embed["features"])), NamedSharding(mesh, P("model", "data"))
)
mlp = layers["mlp"]
w_in = jax.device_put(  # expect: w_in
    jnp.zeros((mlp["features"], mlp["hidden"]), mlp["dtype"]), NamedSharding(mesh, P("data", "model"))
)
head = cfg["layers"]["head"]
w_out = jax.device_put(jnp.zeros((head["features"], 8)), NamedSharding(mesh, P("model")))  # expect: w_out
