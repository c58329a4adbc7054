"""A workspace class's `__module__` and the test that compares it with an array type's.

The text of a class's module name depends on how the program is run, so it is never made up;
what is known is whose module it is, which decides `type(x).__module__ == cls.__module__` for
an array `x` and a workspace class `cls` (see `library/type_names.py`).
"""

from __future__ import annotations

import ast
from pathlib import PurePath

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.values import ModuleNameV, Value

_JAX_PACKAGES = frozenset({"jax", "jaxlib"})


def class_module(cls: ClassInfo) -> Value | None:
    """`cls.__module__` of a workspace class: the workspace's own module, unless the class
    sets `__module__` in its body or its file lies in a `jax`/`jaxlib` package (JAX's own
    sources as a workspace); None then (the attribute is read as any other)."""
    if _assigns_module(cls.node) or _JAX_PACKAGES.intersection(PurePath(cls.module.path).parts):
        return None
    return ModuleNameV(jax=False)


def _assigns_module(node: ast.ClassDef) -> bool:
    for statement in node.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign | ast.AugAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__module__" for t in targets):
            return True
    return False


def same_module(left: Value, right: Value) -> bool | None:
    """`==` of two class modules: False for JAX's against the workspace's; None otherwise."""
    if isinstance(left, ModuleNameV) and isinstance(right, ModuleNameV) and left.jax != right.jax:
        return False
    return None
