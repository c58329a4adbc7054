"""A lambda bound to a name, read as the `def` it stands for.

`P = lambda *a: NamedSharding(mesh, PartitionSpec(*a))` and `shard = lambda x, *a:
jax.device_put(x, NamedSharding(mesh, P(*a)))` are helpers as much as a `def` would be (flax's
tests, maxtext's and EasyLM's scripts write them so), but a lambda is an expression: its calls
evaluated to nothing, so every layout made through one was unknown. Read as `def shard(x, *a):
return jax.device_put(...)` (the same parameters, its body returned, positioned where the lambda
is written), it is evaluated, bound and walked by the code that handles functions. Only a lambda
that is the whole value of an assignment to one name is read so: a lambda passed as an argument
(`jax.tree.map(lambda x: ..., tree)`) is left to the library that calls it.
"""

from __future__ import annotations

import ast
import weakref

from shardls.analysis.node_memo import per_node

_MADE: weakref.WeakSet[ast.FunctionDef] = weakref.WeakSet()


def named_lambda(statement: ast.AST) -> ast.Lambda | None:
    """The lambda `statement` binds to one name (`name = lambda ...: ...`), if it does."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Lambda)
    ):
        return statement.value
    return None


@per_node
def lambda_def(statement: ast.Assign) -> ast.FunctionDef:
    """The `def` a `name = lambda ...` assignment stands for (one per statement, kept as long as
    it lives, so that its function info and memos are shared by every evaluation)."""
    node = named_lambda(statement)
    assert node is not None and isinstance(statement.targets[0], ast.Name)
    returned = ast.copy_location(ast.Return(value=node.body), node.body)
    made = ast.FunctionDef(
        name=statement.targets[0].id, args=node.args, body=[returned], decorator_list=[], returns=None
    )
    made = ast.copy_location(made, node)
    _MADE.add(made)
    return made


def is_lambda_def(node: ast.AST) -> bool:
    """Whether `node` is a `def` made from a lambda here (its body is the lambda's expression)."""
    return isinstance(node, ast.FunctionDef) and node in _MADE
