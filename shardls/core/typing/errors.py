"""The trace-time errors of sharding-in-types, as problems.

Each operation's rule raises `TypeRejected` with the problem JAX's own rule would raise, and its
message quotes JAX's (with the values of the case). `data["jax_error"]` names the exception class
JAX raises, so a rendering can say it and the differential test can check it.
"""

from __future__ import annotations

from collections.abc import Mapping

from shardls.core.problems import Problem, Severity

SHARDING_TYPE_ERROR = "ShardingTypeError"
VALUE_ERROR = "ValueError"
NOT_IMPLEMENTED = "NotImplementedError"
TYPE_ERROR = "TypeError"
DUPLICATE_SPEC_ERROR = "DuplicateSpecError"


class TypeRejected(Exception):
    """An operation JAX rejects while tracing; `problem` says which rule and why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def reject(code: str, message: str, jax_error: str = SHARDING_TYPE_ERROR, **data: object) -> TypeRejected:
    """The exception for one rule; `raise reject(...)` reads as JAX's `raise ShardingTypeError(...)`."""
    details: Mapping[str, object] = {"jax_error": jax_error, **data}
    return TypeRejected(Problem(code, Severity.ERROR, message, details))


class ShapeError(Exception):
    """The operation is malformed before any sharding is involved (a shape or dtype JAX's own shape
    rule rejects, an axis out of range): not a sharding problem, so it carries no code. The
    analyzer reports these elsewhere, or not at all; `jax_error` is the class JAX raises."""

    def __init__(self, message: str, jax_error: str = TYPE_ERROR) -> None:
        super().__init__(message)
        self.jax_error = jax_error
