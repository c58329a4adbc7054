"""A model library module that re-exports P, so callers can write `model_lib.P(...)`."""
from jax.sharding import PartitionSpec as P

__all__ = ["P"]
