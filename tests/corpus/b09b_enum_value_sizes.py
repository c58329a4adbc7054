"""Enum `.value` used for sizes and for axis names together (model-size presets keyed by an Enum)."""
import enum

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


class Size(enum.Enum):
    SMALL = 128
    LARGE = 1024


class Axis(str, enum.Enum):
    DATA = "data"
    MODEL = "model"


mesh = jax.make_mesh((2, 4), (Axis.DATA.value, Axis.MODEL.value))
small = jax.device_put(jnp.zeros((Size.SMALL.value, 8)), NamedSharding(mesh, P(Axis.MODEL.value)))  # expect: small
large = jax.device_put(jnp.zeros((8, Size.LARGE.value)), NamedSharding(mesh, P(Axis.DATA.value, Axis.MODEL.value)))  # expect: large
