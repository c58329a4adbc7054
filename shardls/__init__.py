"""shardls: see how JAX/Flax arrays and parameters are laid out across devices, without running them."""

from shardls.core.seed import partition_spec_layout

__version__ = "0.1.0"

__all__ = ["__version__", "partition_spec_layout"]
