"""Functions and classes of a module: their parameters, decorators, fields and methods.

Each builds the scope of its body on first use only: most functions of a workspace are never
called by anything the analysis follows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from shardls.analysis.scope_builder import build_scope, dotted_name
from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.source import Segment

if TYPE_CHECKING:
    from shardls.analysis.module_info import ModuleInfo


@dataclass(eq=False)
class FunctionInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    module: ModuleInfo
    segment: Segment
    parent: Scope
    owner: ClassInfo | None = None

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def qualname(self) -> str:
        return f"{self.owner.name}.{self.name}" if self.owner else self.name

    @cached_property
    def decorators(self) -> tuple[str, ...]:
        return tuple(dotted_name(d.func if isinstance(d, ast.Call) else d) for d in self.node.decorator_list)

    @property
    def kind(self) -> str:
        """function | method | classmethod | staticmethod | property"""
        for decorator in self.decorators:
            last = decorator.rsplit(".", 1)[-1]
            if last in ("classmethod", "staticmethod", "property", "cached_property"):
                return "property" if last.endswith("property") else last
        return "method" if self.owner else "function"

    @cached_property
    def params(self) -> list[ast.arg]:
        args = self.node.args
        ordered = list(args.posonlyargs) + list(args.args)
        if args.vararg:
            ordered.append(args.vararg)
        ordered.extend(args.kwonlyargs)
        if args.kwarg:
            ordered.append(args.kwarg)
        return ordered

    def default_of(self, param: str) -> ast.expr | None:
        args = self.node.args
        positional = list(args.posonlyargs) + list(args.args)
        offset = len(positional) - len(args.defaults)
        for i, arg in enumerate(positional):
            if arg.arg == param and i >= offset:
                return args.defaults[i - offset]
        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
            if arg.arg == param:
                return default
        return None

    def release(self) -> None:
        """Drop what the info made of its node (`made_of`): its module was dropped."""
        dropped(self)

    @cached_property
    def scope(self) -> Scope:
        params = [Binding(arg.arg, "param", arg, None, self.segment, 0) for arg in self.params]
        scope = Scope("function", self.parent, module=self.module, function=self)
        return build_scope(scope, [(self.segment, self.node.body)], params)

    @cached_property
    def returns(self) -> list[ast.Return]:
        """The `return`s of the function's own body, in the order `_own` meets them. Statements
        only: no expression holds one, and a model's body is mostly expressions."""
        return [node for node, _ in self._own(statements_only=True) if isinstance(node, ast.Return)]

    @cached_property
    def yields(self) -> list[tuple[ast.Yield | ast.YieldFrom, ast.stmt]]:
        """The `yield`s of the function's own body, each with the statement it is in, in the
        order of the text: the function is a generator when there is one. Asked of every
        function called; where the text of its segment never says `yield`, none is, and its
        nodes are not walked."""
        if "yield" not in self.segment.text:
            return []
        found = [(node, stmt) for node, stmt in self._own() if isinstance(node, (ast.Yield, ast.YieldFrom))]
        return sorted(found, key=lambda pair: (pair[0].lineno, pair[0].col_offset))

    def _own(self, statements_only: bool = False) -> Iterator[tuple[ast.AST, ast.stmt]]:
        """The nodes of the function's own body (not of the functions, classes and lambdas
        nested in it), each with the statement it is in; with `statements_only`, the nodes that
        are no expression (an expression holds no statement)."""
        stack: list[tuple[ast.AST, ast.stmt]] = [(stmt, stmt) for stmt in self.node.body]
        while stack:
            node, stmt = stack.pop()
            yield node, stmt
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(
                    (child, child if isinstance(child, ast.stmt) else stmt)
                    for child in ast.iter_child_nodes(node)
                    if not (statements_only and isinstance(child, ast.expr))
                )


@dataclass(eq=False)
class ClassInfo:
    node: ast.ClassDef
    module: ModuleInfo
    segment: Segment
    parent: Scope

    @property
    def name(self) -> str:
        return self.node.name

    def release(self) -> None:
        """Drop what the info made of its node, its methods' infos' too (`dropped`): its module
        was dropped."""
        for method in self.__dict__.get("methods", {}).values():
            method.release()
        dropped(self)

    @cached_property
    def scope(self) -> Scope:
        return build_scope(
            Scope("class", self.parent, module=self.module, owner=self), [(self.segment, self.node.body)]
        )

    @cached_property
    def decorators(self) -> tuple[str, ...]:
        return tuple(dotted_name(d.func if isinstance(d, ast.Call) else d) for d in self.node.decorator_list)

    @cached_property
    def base_names(self) -> tuple[str, ...]:
        return tuple(dotted_name(b) for b in self.node.bases)

    @cached_property
    def field_names(self) -> tuple[str, ...]:
        """Annotated class attributes in order: the __init__ parameters of a dataclass or NamedTuple."""
        names = []
        for stmt in self.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                annotation = ast.unparse(stmt.annotation) if stmt.annotation else ""
                if "ClassVar" not in annotation:
                    names.append(stmt.target.id)
        return tuple(names)

    @cached_property
    def methods(self) -> dict[str, FunctionInfo]:
        return {
            name: FunctionInfo(stmt, self.module, self.segment, self.scope, self)
            for name, stmt in method_defs(self.node).items()
        }

    @cached_property
    def self_assignments(self) -> dict[str, list[tuple[FunctionInfo, ast.stmt]]]:
        """`self.x = ...` in the methods that build an instance (`__init__`, `__post_init__`, `setup`,
        and a test's `setUp`, which the test runner calls before each test method)."""
        found: dict[str, list[tuple[FunctionInfo, ast.stmt]]] = {}
        for method_name in ("__init__", "__post_init__", "setup", "setUp"):
            method = self.methods.get(method_name)
            if method is None:
                continue
            for node in ast.walk(method.node):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for target in targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            found.setdefault(target.attr, []).append((method, node))
                elif isinstance(node, ast.Call) and dotted_name(node.func) in (
                    "object.__setattr__",
                    "setattr",
                ):
                    args = node.args
                    if (
                        len(args) == 3
                        and isinstance(args[1], ast.Constant)
                        and isinstance(args[1].value, str)
                    ):
                        found.setdefault(args[1].value, []).append((method, ast.Expr(node)))
        return found


def dropped(made: object) -> None:
    """Drop the cached properties of `made`: a module's scope refers to the module, a class's or
    function's scope to its info (`Scope.module`, `owner`, `function`), so a module version the
    workspace no longer keeps was freed only by a full collection (at 20k lines, ~22,000 objects
    per Enter, kept by the server's frozen collector until then). Without the properties the
    references run one way and counting them frees it; anything still holding the object makes
    them again when asked."""
    cached = [name for name in vars(made) if isinstance(getattr(type(made), name, None), cached_property)]
    for name in cached:
        del made.__dict__[name]


def method_defs(node: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """A class's methods by name, the last `def` of a name winning (as Python binds them)."""
    return {
        stmt.name: stmt for stmt in node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
