"""What the evaluator is given to reach outside the file (the workspace's modules, the library's
models) and what it reports back (the names and modules it read)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from shardls.analysis.data_file import DataFile
from shardls.analysis.definitions import ClassInfo
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Scope
from shardls.analysis.values import BoundMethod, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import Frame
    from shardls.analysis.evaluator import Evaluator


class ModuleResolver(Protocol):
    def resolve(self, importer: ModuleInfo, dotted: str, level: int) -> ModuleInfo | None: ...

    def data_file(self, path: str) -> DataFile:
        """A file of the workspace read as data (a config), noted as read."""
        ...

    def within(self, path: str, importer: ModuleInfo) -> bool:
        """Whether `path` is in the workspace (where `importer` is, without workspace roots)."""
        ...


class LibraryCalls(Protocol):
    """What the interpreter knows about JAX, Flax, numpy and the standard library."""

    def canonical(self, qualname: str) -> str: ...

    def call(
        self,
        evaluator: Evaluator,
        qualname: str,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None: ...

    def models_call(self, qualname: str) -> bool:
        """Whether `call` may answer for `qualname` (else its result is unknown, whatever the
        arguments)."""
        ...

    def models_method(self, method: BoundMethod) -> bool:
        """Whether `method` may answer for this method (else its result is unknown)."""
        ...

    def attribute(
        self, evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame
    ) -> Value | None: ...

    def method(
        self,
        evaluator: Evaluator,
        method: BoundMethod,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None: ...

    def parameter(self, scope: Scope, name: str) -> Value | None: ...

    def subscript(
        self, evaluator: Evaluator, base: Value, index: Value | slice, frame: Frame
    ) -> Value | None: ...

    def instantiate(
        self,
        evaluator: Evaluator,
        cls: ClassInfo,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call | None,
        frame: Frame,
    ) -> Value | None: ...


@dataclass
class Reads:
    """What an evaluation depended on outside its own statements (for incremental re-analysis)."""

    names: set[tuple[str, str]] = field(default_factory=set)
    """(module path, name) for every module-level name looked up."""
    modules: dict[str, ModuleInfo | DataFile] = field(default_factory=dict)
    """Workspace modules read through imports, and files read as data (configs), by path."""
    callees: set[str] = field(default_factory=set)
    """Names whose call sites were searched (a new caller changes the result)."""
    methods: set[tuple[str, str]] = field(default_factory=set)
    """(module path, `Class.method`) for every method looked up on a class or instance (the
    way to its body; `Class.*`: all of the class's method bodies were read), so that an edit
    of one method's body analyses again only the statements of its class that read it
    (`method_units`)."""

    def noted(self) -> bool:
        """Whether anything was read."""
        return bool(self.names or self.modules or self.callees or self.methods)

    def add(self, other: Reads) -> None:
        """Note what `other` read too: a memoised answer's reads, each time it is reused, so that
        every reader depends on what computing it read."""
        self.names |= other.names
        self.modules.update(other.modules)
        self.callees |= other.callees
        self.methods |= other.methods
