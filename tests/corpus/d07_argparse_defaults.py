"""d7: shapes from argparse defaults (maxtext `examples/shardings.py` style); the runner passes no arguments."""
import argparse

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

parser = argparse.ArgumentParser(description="sharding demo")
parser.add_argument("--batch_size", type=int, default=32)
parser.add_argument("--embedding_dimension", type=int, default=512)
parser.add_argument("--ici_fsdp_parallelism", type=int, default=4)
parser.add_argument("--ici_tensor_parallelism", type=int, default=2)
args = parser.parse_args()

mesh = jax.make_mesh((args.ici_fsdp_parallelism, args.ici_tensor_parallelism), ("fsdp", "tensor"))
D_EMB = args.embedding_dimension
D_FF = 4 * D_EMB
acts = jax.device_put(jnp.zeros((args.batch_size, D_EMB)), NamedSharding(mesh, P("fsdp", "tensor")))  # expect: acts
w = jax.device_put(jnp.zeros((D_EMB, D_FF)), NamedSharding(mesh, P("fsdp", "tensor")))  # expect: w
