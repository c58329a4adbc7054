"""`type(x)` of an array and the names classes carry, as far as they decide a test.

Every model of jax-llm-examples tells its quantized arrays from plain ones with
`is_type = lambda x, cls: (type(x).__name__ == cls.__name__) and (type(x).__module__ ==
cls.__module__)` (`psc`, `lsc`, `einsum`, `_route_tokens_to_moe_experts`): unanswered, every
such helper was both branches, and an array passed through one lost its rank to the
`dataclasses.replace` of the other. The module of an array's type is JAX's and a workspace
class's is the workspace's, so the second test is false for an array and a class written in
the workspace (`evaluation/class_modules.py`), and so is the `and` with it
(`operators._eval_BoolOp`). The first test stays unknown:
no name is made up for JAX's types, nor for the workspace's modules.
"""

from __future__ import annotations

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.registry import attributes, calls
from shardls.analysis.values import ArrayTypeV, ArrayV, ModuleNameV, Value


@calls("builtins.type")
def _type(call: CallArgs) -> Value | None:
    """`type(x)` of one argument that is an array; anything else is not modelled."""
    if len(call.args) != 1 or call.kwargs or not isinstance(call.args[0], ArrayV):
        return None
    return ArrayTypeV()


@attributes(ArrayTypeV)
def _array_type_attribute(
    library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame
) -> Value | None:
    return ModuleNameV(jax=True) if attr == "__module__" else None
