"""Opt-in exact mode: import the user's model factory and ask JAX for the true layouts.

The only part of shardls that imports user code or jax, and only on the explicit
`shardls report --exact package.module:factory` command (never from the language server).
"""

from shardls.exact.run import ExactUnavailable, exact_model

__all__ = ["ExactUnavailable", "exact_model"]
