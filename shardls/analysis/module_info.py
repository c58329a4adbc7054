"""A module as the analysis reads it: its source, its scope, and which segments call what.

The scope and the call index are made from the previous version's when the file was edited
(`scope_edit`), and the infos of the module's classes and functions are kept here so that every
file that evaluates the module shares them.
"""

from __future__ import annotations

import ast
import functools
import re
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from shardls.analysis.source import ParsedSource, Segment

if TYPE_CHECKING:
    from shardls.analysis.definitions import ClassInfo, FunctionInfo
    from shardls.analysis.scope_edit import ModuleScope, Window
    from shardls.analysis.scopes import Scope

_CALLED_NAME = re.compile(r"(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_]*+)\s*\(")
"""A name followed by `(`. It finds what `([A-Za-z_][A-Za-z0-9_]*)\\s*\\(` finds (no shorter run
of name characters can be followed by `(`), without trying every suffix of every name that is
not called: a quarter of the time of that expression, which searched every top-level statement
of every module read (1.6 s over maxtext's)."""


@functools.lru_cache(maxsize=20_000)
def called_names(text: str) -> frozenset[str]:
    """Names followed by `(` in a segment; cached by text, so unchanged segments cost nothing."""
    return frozenset(_CALLED_NAME.findall(text))


@dataclass(eq=False)
class ModuleInfo:
    path: str
    name: str | None
    """Dotted module name within the workspace, when known."""
    source: ParsedSource
    previous: weakref.ref[ModuleInfo] | None = field(default=None, repr=False)
    """The module of the file's previous text (while it lives): its scope and call index are
    made from that one's, finding again only what the edited segments hold (`scope_edit`)."""
    searches: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict, repr=False)
    """Answers of searches of the module's text (`call_syntax.first_arguments`), kept with it: a
    cache keyed by modules kept every version of an edited file alive."""
    class_infos: dict[tuple[int, int, int], ClassInfo] = field(default_factory=dict, repr=False)
    """The infos of the module's classes, by the node, segment and enclosing scope they are
    made from (`Evaluator.class_info`): what they find (their scope, methods, fields) rests on
    nothing else, so every file that evaluates the module shares them instead of building the
    scopes of its classes and functions again (a tenth of a serial check of maxtext)."""
    function_infos: dict[tuple[int, int, int], FunctionInfo] = field(default_factory=dict, repr=False)
    """The infos of the module's functions (not methods, whose class holds them), likewise."""

    def release(self) -> None:
        """Drop what the module made of its source (scope, call index, the infos of its classes
        and functions, searches) once no version of the workspace keeps it (`definitions.dropped`
        says why); its source stays, for the line maps of the modules made from it."""
        from shardls.analysis.definitions import dropped

        for info in self.class_infos.values():
            info.release()
        for function in self.function_infos.values():
            function.release()
        self.class_infos.clear()
        self.function_infos.clear()
        self.searches.clear()
        dropped(self)

    def changed_since(self, earlier: ModuleInfo) -> tuple[frozenset[str], frozenset[str]] | None:
        """The names whose bindings, and the names whose callers, may differ from `earlier`'s,
        when this module's scope and call index were made from `earlier`'s (None otherwise:
        anything may differ)."""
        if self.previous is None or self.previous() is not earlier:
            return None
        changed, callers = self.module_scope.changed, self._calls[1]
        if changed is None or callers is None:
            return None
        return changed, callers

    def callers_key(self, callee: str) -> tuple[tuple[int, int], ...]:
        """The segments that call `callee` (by their trees and lines): what a search of its
        callers read."""
        segments = self.source.segments
        return tuple((id(segments[i].body), segments[i].first_line) for i in self.call_index.get(callee, ()))

    @cached_property
    def global_setters(self) -> dict[str, list[tuple[Segment, ast.FunctionDef | ast.AsyncFunctionDef]]]:
        """The module-level functions whose own body declares each name `global` (what a name
        the module binds nowhere else is, `evaluation.names`), found once per module version."""
        found: dict[str, list[tuple[Segment, ast.FunctionDef | ast.AsyncFunctionDef]]] = {}
        for segment in self.source.segments:
            for stmt in segment.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for inner in stmt.body:
                        if isinstance(inner, ast.Global):
                            for name in inner.names:
                                found.setdefault(name, []).append((segment, stmt))
        return found

    @cached_property
    def placing_functions(self) -> frozenset[str]:
        """The top-level functions whose defining statement mentions a placement: the helpers
        another module's calls may get sites from (`walking/helper_imports.py`)."""
        from shardls.analysis.walking.helper_imports import placing_functions

        return placing_functions(self)

    @cached_property
    def placing_lambdas(self) -> frozenset[str]:
        """The names bound to a lambda that places what it is given, anywhere in the module
        (`shard = lambda x, *a: jax.device_put(x, ...)` in a test function): helpers whose calls
        get the layout their body makes (`analysis/foreign_calls.py`), in this module too."""
        from shardls.analysis.walking.helper_imports import placing_lambdas

        return placing_lambdas(self)

    @cached_property
    def top_imports(self) -> tuple[ast.Import | ast.ImportFrom, ...]:
        """The module's top-level import statements, in order (read once per module version)."""
        return tuple(
            stmt
            for segment in self.source.segments
            for stmt in segment.body
            if isinstance(stmt, (ast.Import, ast.ImportFrom))
        )

    @property
    def scope(self) -> Scope:
        return self.module_scope.scope

    @cached_property
    def module_scope(self) -> ModuleScope:
        """The scope, made from the previous module's when the edit allows (`scope_edit`)."""
        from shardls.analysis.scope_edit import module_scope, scope_after_edit

        edit = self._edited_from("module_scope")
        if edit is not None:
            previous, window = edit
            edited = scope_after_edit(previous.module_scope, previous.source.segments, self, window)
            if edited is not None:
                return edited
        return module_scope(self)

    def _edited_from(self, made: str) -> tuple[ModuleInfo, Window] | None:
        """The previous module and the segments the edit changed, when the previous module has
        already made `made` (a cached property), which this one's can then be patched from."""
        from shardls.analysis.scope_edit import edited_window

        previous = self.previous() if self.previous is not None else None
        if previous is None or made not in previous.__dict__:
            return None
        return previous, edited_window(previous.source, self.source)

    @property
    def call_index(self) -> dict[str, tuple[int, ...]]:
        """Name -> indices of the segments that contain `name(`; finds callers without rescanning."""
        return self._calls[0]

    @cached_property
    def _calls(self) -> tuple[dict[str, tuple[int, ...]], frozenset[str] | None]:
        """The call index, and the names whose callers may differ from the previous module's
        when it was made from that one's (None: built from scratch)."""
        from shardls.analysis.scope_edit import call_index_after_edit

        edit = self._edited_from("_calls")
        if edit is not None:
            previous, window = edit
            edited = call_index_after_edit(previous.call_index, previous.source.segments, self, window)
            if edited is not None:
                return edited
        index: dict[str, list[int]] = {}
        for number, segment in enumerate(self.source.segments):
            for name in called_names(segment.text):
                index.setdefault(name, []).append(number)
        return {name: tuple(numbers) for name, numbers in index.items()}, None
