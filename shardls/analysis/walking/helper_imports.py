"""Which names a module imports that are placement helpers of another workspace module.

A helper imported from elsewhere in the workspace (`from .utils import put`, `import utils` then
`utils.put(...)`, a package's `__init__` re-exporting `put`) places its argument with a sharding
its caller passes, so its calls are where a layout is decided (`analysis/foreign_calls.py`).
The walker visits only statements whose text calls a name worth visiting, so those names must be
known before the walk: here they are found from the imports' syntax and the imported modules'
text alone, without evaluating anything. A function counts as a helper when the text of the
statement that defines it mentions a placement (`_PLACES`): a cheap over-approximation that the
evaluation of each call then narrows down.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.evaluation.interfaces import ModuleResolver
from shardls.analysis.module_info import ModuleInfo, called_names
from shardls.analysis.walking.text_tests import NamedCalls, TextTest

_PLACES = (
    "device_put",
    "with_sharding_constraint",
    "reshard",
    "NamedSharding",
    "make_array_from_callback",
    "ShapeDtypeStruct",
)
"""Words of a function's text that may make a site of an argument."""

MAX_REEXPORTS = 3
"""Re-exports followed from an import to the definition (`from pkg import put` where
`pkg/__init__.py` says `from .utils import put`): bounded, as import cycles are legal."""


def placing_functions(module: ModuleInfo) -> frozenset[str]:
    """The module's top-level functions whose defining statement mentions a placement or calls
    another such function of the module (`put_batch(x)` calling `put(x, P("data"))`), read once
    per module version (`ModuleInfo.placing_functions`)."""
    calls: dict[str, frozenset[str]] = {}
    found: set[str] = set()
    for segment in module.source.segments:
        for stmt in segment.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(word in segment.text for word in _PLACES):
                    found.add(stmt.name)
                else:
                    calls[stmt.name] = called_names(segment.text)
    grown = True
    while grown:  # each round adds a function or ends: at most one round per function
        callers = {name for name, called in calls.items() if not called.isdisjoint(found)}
        grown = bool(callers)
        found |= callers
        for name in callers:
            del calls[name]
    return frozenset(found)


def helper_names(resolver: ModuleResolver, module: ModuleInfo) -> frozenset[str]:
    """The names through which `module` may call a placement helper of another workspace module:
    an imported helper's local name, and the helpers of an imported module (called as
    `utils.put(...)`, whose last word is the name). Only the module's top-level imports."""
    found: set[str] = set()
    for segment in module.source.segments:
        for stmt in segment.body:
            if isinstance(stmt, ast.ImportFrom):
                found |= _from_import(resolver, module, stmt)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    imported = resolver.resolve(module, alias.name, 0)
                    if imported is not None:
                        found |= _exported(resolver, imported, MAX_REEXPORTS)
    return frozenset(found)


def _from_import(resolver: ModuleResolver, module: ModuleInfo, stmt: ast.ImportFrom) -> set[str]:
    base = resolver.resolve(module, stmt.module or "", stmt.level)
    if base is None or base is module:
        return set()
    found: set[str] = set()
    for alias in stmt.names:
        if alias.name == "*":
            found |= _exported(resolver, base, MAX_REEXPORTS)
        elif _places(resolver, base, alias.name, MAX_REEXPORTS):
            found.add(alias.asname or alias.name)
        elif base.path.endswith("__init__.py"):  # `from pkg import utils`: a submodule
            submodule = resolver.resolve(base, alias.name, 1)
            if submodule is not None:
                found |= _exported(resolver, submodule, MAX_REEXPORTS)
    return found


def _places(resolver: ModuleResolver, module: ModuleInfo, name: str, depth: int) -> bool:
    """Whether `name` in `module` is a placing function, or re-exports one."""
    if name in module.placing_functions:
        return True
    if depth <= 0:
        return False
    for binding in module.scope.lookup(name, None):
        statement = binding.statement
        if binding.kind == "importfrom" and isinstance(statement, ast.ImportFrom):
            source = resolver.resolve(module, statement.module or "", statement.level)
            original = binding.node.name if isinstance(binding.node, ast.alias) else name
            if source is not None and source is not module and _places(resolver, source, original, depth - 1):
                return True
    return False


def _exported(resolver: ModuleResolver, module: ModuleInfo, depth: int) -> set[str]:
    """The placing functions a module defines or re-exports by name."""
    found = set(module.placing_functions)
    if depth <= 0:
        return found
    for segment in module.source.segments:
        for stmt in segment.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level:  # a package's own modules
                source = resolver.resolve(module, stmt.module or "", stmt.level)
                if source is None or source is module:
                    continue
                for alias in stmt.names:
                    if alias.name != "*" and _places(resolver, source, alias.name, depth - 1):
                        found.add(alias.asname or alias.name)
    return found


@dataclass(frozen=True)
class OrCalls:
    """Text that `trigger` finds or that calls one of `names` (the walker's segment trigger
    widened by the helpers a module imports)."""

    trigger: TextTest
    names: frozenset[str]

    def search(self, text: str) -> bool:
        return bool(self.trigger.search(text)) or not self.names.isdisjoint(called_names(text))


def with_helpers(
    calls: NamedCalls, trigger: TextTest, helpers: frozenset[str]
) -> tuple[TextTest, NamedCalls]:
    """The walker's segment trigger and call test, also finding calls of `helpers`."""
    if not helpers:
        return trigger, calls
    return OrCalls(trigger, helpers), NamedCalls(calls.names | helpers)
