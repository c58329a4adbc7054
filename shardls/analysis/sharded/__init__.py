"""Sharding in types, inside the interpreter: the sharded type (`jax.typeof`) of every array computed
from arrays whose type is known, and the trace-time errors JAX raises for them in Explicit mode.

The rules themselves are the core's (`shardls.core.typing`); this package decides when every fact
a rule needs is known (shape, dtype, spec and a mesh with Explicit axes), applies the rule where the
interpreter evaluates an operation, and records each result or rejection as a `TypeEvent` for the
analyzer to turn into hovers, layouts and diagnostics.
"""
