"""Which core rule each operation of model code is, and how its arguments are read.

Operators (`+ - * / @`, comparisons), jnp functions, `jax.nn` activations, array methods and
attributes (`x.reshape`, `x.T`, `x.sum`), indexing and placements. Each concern has its module;
importing them here registers their rules, so the interpreter needs only this entry point.
"""

from shardls.analysis.sharded import contraction, layers, manual, placement, reduction
from shardls.analysis.sharded.elementwise import typed_binop
from shardls.analysis.sharded.indexing import typed_get, typed_subscript
from shardls.analysis.sharded.registry import has_call_rule, has_method, typed_call, typed_method
from shardls.analysis.sharded.scatter import typed_update
from shardls.analysis.sharded.shaping import typed_attribute

RULE_MODULES = (contraction, layers, manual, placement, reduction)
"""Modules imported for the rules they register (the others are imported for their entry points)."""

__all__ = [
    "RULE_MODULES",
    "has_call_rule",
    "has_method",
    "typed_attribute",
    "typed_binop",
    "typed_call",
    "typed_get",
    "typed_method",
    "typed_subscript",
    "typed_update",
]
