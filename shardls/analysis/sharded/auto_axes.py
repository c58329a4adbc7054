"""`@jax.sharding.auto_axes`: inside, every mesh axis (or those named by `axes=`) is Auto.

JAX's parallel-programming tutorial adds two differently sharded arrays inside an
`@auto_axes` function to show that the compiler then chooses the layout; Auto axes never appear
in an array's type, so no type is known there and no ShardingTypeError can be raised. Which
axes `axes=` leaves Explicit is not modelled: the arrays inside get no type at all, which is
never wrong, only less.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from shardls.analysis.node_memo import per_node
from shardls.analysis.sharded.propagate import untyped
from shardls.analysis.values import Value

_AUTO_AXES = ("auto_axes",)


@per_node
def under_auto_axes(node: ast.AST) -> bool:
    """Whether the function is decorated with `auto_axes` (`@auto_axes`, `@jax.sharding.auto_axes`,
    `@partial(auto_axes, out_sharding=...)`, `@auto_axes(axes=...)`)."""
    decorators = getattr(node, "decorator_list", ())
    return any(name in ast.unparse(d) for d in decorators for name in _AUTO_AXES)  # once per function


def without_types(values: Mapping[str, Value]) -> dict[str, Value]:
    """The arguments as the body sees them: the same arrays, their sharded types unknown."""
    return {name: untyped(value) or value for name, value in values.items()}
