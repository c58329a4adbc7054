"""Whole-model memory: every parameter of a Flax NNX model, its layout, and the totals.

Static, like the rest of the analysis (no jax, no user code is run); `shardls.exact` is the
opt-in counterpart that asks JAX. Import the submodules directly: `discover.file_models` is the
entry point, `model` the data, `report` the renderings. This package file stays empty so that
the configuration can read the optimizer names without loading the analysis.
"""
