"""Whether a function's decorators run its body under a JAX trace, or compile it as one.

Read from the decorators' text alone, so that a function is judged without evaluating anything.
"""

from __future__ import annotations

import ast

from shardls.analysis.node_memo import per_node

_JIT_DECORATORS = ("jit", "shard_map")
_TRACING_DECORATORS = (*_JIT_DECORATORS, "vmap", "pmap", "grad", "checkpoint", "remat", "scan")
_PLAIN_DECORATORS = frozenset(
    {"property", "staticmethod", "classmethod", "functools.cache", "functools.wraps"}
)


@per_node
def traced_by_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool | None:
    """Whether calling the function runs its body under a JAX trace: True for `@jax.jit`,
    `@partial(jax.jit, ...)`, `@nnx.jit`, `@jax.vmap`, `@jax.checkpoint`, ...; False when it has
    no decorator that could change it; None for other decorators (one may well be a jit)."""
    decorators = [] if isinstance(node, ast.Lambda) else node.decorator_list
    texts = [ast.unparse(d) for d in decorators]
    if any(word in text for text in texts for word in _TRACING_DECORATORS):
        return True
    return False if all(text in _PLAIN_DECORATORS for text in texts) else None


@per_node
def jitted_by_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`@jax.jit`, `@partial(jax.jit, ...)`, `@nnx.jit`, `@jax.shard_map(...)`: the body is
    compiled as one computation (where `with_sharding_constraint` pads instead of failing)."""
    return any(word in ast.unparse(d) for d in node.decorator_list for word in _JIT_DECORATORS)


def body_traced(decorated: bool | None, traced_here: bool, caller_traced: bool | None) -> bool | None:
    """Whether a function's body runs traced when one caller runs it: its decorator traces it
    (`decorated`, as `traced_by_decorator` says), it runs inside a jit or a provider's trace
    (`traced_here`), or its caller is traced; unknown when the decorator or the caller is."""
    if decorated or traced_here or caller_traced:
        return True
    if decorated is None or caller_traced is None:
        return None
    return False
