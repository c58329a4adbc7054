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
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from shardls.analysis.foreign_jit import SHARDING_KEYWORDS, jit_call, jit_decorator
from shardls.analysis.lambda_defs import lambda_def, named_lambda
from shardls.analysis.module_info import ModuleInfo, called_names
from shardls.analysis.node_memo import per_node
from shardls.analysis.walking.call_syntax import called_name
from shardls.analysis.walking.text_tests import NamedCalls, TextTest
from shardls.analysis.workspace import MODELLED_LIBRARIES, Workspace
from shardls.analysis.workspace_answers import per_snapshot

PLACEMENTS = frozenset(
    (
        "device_put",
        "with_sharding_constraint",
        "reshard",
        "NamedSharding",
        "make_array_from_callback",
        "make_array_from_single_device_arrays",
        "ShapeDtypeStruct",
    )
)
"""The calls by which a helper lays out what its caller passes (by their last name)."""

PLACING_WORDS = (*PLACEMENTS, *SHARDING_KEYWORDS)
"""Words without which a module's text defines no helper: a placement, or a jit's shardings."""

MAX_HELPER_STATEMENTS = 25
"""A helper is short (tunix's `shard` has 7 statements, maxtext's `maybe_shard_with_name` 20): a
longer function that places what it computes from its parameters is a program (a training loop
given its config), whose placements do not take their layout from the call, and walking it again
at every call cost more than all the rest of its callers' analysis."""

MAX_REEXPORTS = 3
"""Re-exports followed from an import to the definition (`from pkg import put` where
`pkg/__init__.py` says `from .utils import put`): bounded, as import cycles are legal."""


@per_node
def from_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """The names of a function's body whose value may come from its parameters: the parameters,
    and what assignments compute from them (in the order written, read from the syntax)."""
    arguments = node.args
    found = {
        a.arg
        for a in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            arguments.vararg,
            arguments.kwarg,
        ]
        if a is not None
    }
    for inner in ast.walk(node):
        if not isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or inner.value is None:
            continue
        if not _mentioned(inner.value).isdisjoint(found):
            targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
            found |= {n for target in targets for n in _mentioned(target)}
    return frozenset(found)


def places_parameter(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a placement `call` in `function` lays out something made from its parameters."""
    return not from_parameters(function).isdisjoint(_mentioned(call))


def rewrites_argument(call: ast.Call, module: ModuleInfo) -> bool:
    """Whether a placement passes the result of a function of its module (`wsc(x,
    _relaxed(spec))`): what it places is what that code makes of the caller's arguments, often
    under conditions shardls cannot decide (axlearn's `maybe_shard` drops the axes a `shard_map`
    made Manual), so a problem found there is no problem of the call."""
    defined = _top_defs(module.source.text)
    arguments = [*call.args, *(k.value for k in call.keywords)]
    return any(
        isinstance(node, ast.Call) and called_name(node) in defined
        for argument in arguments
        for node in ast.walk(argument)
    )


@per_node
def _statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The statements of the function's body, counted up to one more than a helper may have
    (`MAX_HELPER_STATEMENTS`): a model's `forward` is asked too, and walking all its nodes to
    count hundreds of statements was most of the helper search in jax-llm-examples."""
    count = -1
    for node in ast.walk(function):
        if isinstance(node, ast.stmt):
            count += 1
            if count > MAX_HELPER_STATEMENTS:
                break
    return count


@per_node
def _mentioned(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def placing_functions(module: ModuleInfo, imported: frozenset[str] = frozenset()) -> frozenset[str]:
    """The module's top-level functions that place something made from their parameters
    (`PLACEMENTS`), or pass it to another such function of the module (`put_batch(x)` calling
    `put(x, P("data"))`) or to one of `imported` (the helpers it imports from another module,
    `helpers_of`); without those, read once per module version (`ModuleInfo.placing_functions`)."""
    defs = [
        (function, called_names(segment.text))
        for segment in module.source.segments
        for stmt in segment.body
        if (function := _defined(stmt)) is not None
    ]
    found = jitted_names(module)
    grown = True
    while grown:  # each round adds a function or ends: at most one round per function
        callees = PLACEMENTS | imported | found
        added = {
            d.name
            for d, called in defs
            if d.name not in found and not called.isdisjoint(callees) and _is_helper(d, callees)
        }
        grown = bool(added)
        found |= added
    return frozenset(found)


def jitted_names(module: ModuleInfo) -> set[str]:
    """The module's top-level names of functions jitted with shardings (`step = jax.jit(f,
    in_shardings=...)`, `@partial(jax.jit, in_shardings=...)` on a `def`): a call of one in
    another module meets those shardings (`analysis/foreign_jit.py`)."""
    if not any(word in module.source.text for word in SHARDING_KEYWORDS):
        return set()
    found: set[str] = set()
    for segment in module.source.segments:
        for stmt in segment.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(jit_decorator(d) for d in stmt.decorator_list):
                    found.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and jit_call(stmt.value):
                found |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    return found


def placing_methods(module: ModuleInfo, name: str, called: frozenset[str]) -> frozenset[str]:
    """The methods of the module's top-level class `name`, among those `called`, that place what
    they are given or what their instance holds (`self.mesh`): called on an instance made in
    another module (`sharder.put(x, spec)`), they give their layout at the call as a function
    would."""
    callees = PLACEMENTS | module.placing_functions
    return frozenset(
        method.name
        for segment in module.source.segments
        if any(word in segment.text for word in PLACEMENTS)
        for stmt in segment.body
        if isinstance(stmt, ast.ClassDef) and stmt.name == name
        for method in stmt.body
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
        and method.name in called
        and method.name != "__init__"
        and _is_helper(method, callees)
    )


def _defined(stmt: ast.stmt) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function a statement defines: a `def`, or a lambda bound to a name (`lambda_defs`)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt
    return lambda_def(stmt) if isinstance(stmt, ast.Assign) and named_lambda(stmt) is not None else None


def placing_lambdas(module: ModuleInfo) -> frozenset[str]:
    """The names bound to a lambda, at any depth of the module, that places what it is given and
    is called in the module. Only the segments whose text binds such a name are walked."""
    text = module.source.text
    if "lambda" not in text:
        return frozenset()
    bound = frozenset(_LAMBDA_BOUND.findall(text)) & module.call_index.keys()
    if not bound:
        return frozenset()
    return frozenset(
        node.targets[0].id
        for segment in module.source.segments
        if "lambda" in segment.text and not bound.isdisjoint(_LAMBDA_BOUND.findall(segment.text))
        for stmt in segment.body
        for node in _assignments(stmt)
        if named_lambda(node) is not None
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in bound
        and _is_helper(lambda_def(node), PLACEMENTS)
    )


def _assignments(stmt: ast.stmt) -> Iterator[ast.Assign]:
    """The assignments at any depth of a statement. Its expressions are not walked: none holds a
    statement, and a model's body is mostly expressions (walking every node of each segment that
    binds a lambda was 1.7 % of a check of jax-llm-examples)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assign):
            yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.expr))


@per_snapshot
def helpers_of(workspace: Workspace, module: ModuleInfo, depth: int = MAX_REEXPORTS) -> frozenset[str]:
    """The names by which `module`'s own code may call a helper: its placing functions, the
    helpers it imports from another module by a top-level `from ... import` and calls, and its
    functions that pass their parameters to one of those (`put_rows` in utils.py calling the
    `put` of impl.py: a helper's helper in a third module). `depth` bounds the modules followed,
    so that a cycle of imports ends."""
    own = module.placing_functions
    if depth <= 0:
        return own
    called = module.call_index
    imported = frozenset(
        local
        for stmt in module.top_imports
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
        if (local := alias.asname or alias.name) in called and _places(workspace, module, local, depth - 1)
    )
    return own | imported | placing_functions(module, imported) if imported else own


def _is_helper(function: ast.FunctionDef | ast.AsyncFunctionDef, callees: frozenset[str] | set[str]) -> bool:
    """Whether a function is short and calls one of `callees` with what its parameters make."""
    if _statements(function) > MAX_HELPER_STATEMENTS:
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and called_name(node) in callees and places_parameter(node, function):
            return True
    return False


def helper_names(workspace: Workspace, module: ModuleInfo) -> frozenset[str]:
    """The names through which `module` may call a placement helper of another workspace module:
    an imported helper's local name, and the helpers of an imported module (called as
    `utils.put(...)`, whose last word is the name). Only names the module calls somewhere
    (`ModuleInfo.call_index`) are looked for, only its top-level imports are read, and a module
    is parsed only if its text may define one of them as a helper (`_module`)."""
    called = frozenset(module.call_index)
    found: set[str] = set()
    for stmt in module.top_imports:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                found |= _exported(workspace, _module(workspace, module, alias.name, 0, called), called)
            continue
        sought = frozenset(a.name for a in stmt.names if a.name == "*" or (a.asname or a.name) in called)
        base = _module(workspace, module, stmt.module or "", stmt.level, called if "*" in sought else sought)
        for alias in stmt.names:
            local = alias.asname or alias.name
            if alias.name == "*":
                found |= _exported(workspace, base, called)
            elif local in called and base is not None:
                if _places(workspace, base, alias.name, MAX_REEXPORTS):
                    found.add(local)
                else:  # `Sharder(mesh)`, then `sharder.put(x, spec)`
                    found |= placing_methods(base, alias.name, called)
            else:  # `from pkg import utils`, then `utils.put(...)`: maybe a submodule
                dotted = f"{stmt.module}.{alias.name}" if stmt.module else alias.name
                submodule = _module(workspace, module, dotted, stmt.level, called)
                found |= _exported(workspace, submodule, called)
    return frozenset(found)


def _module(
    workspace: Workspace, importer: ModuleInfo, dotted: str, level: int, sought: frozenset[str]
) -> ModuleInfo | None:
    """The module an import means, parsed only when its text may hold a helper among `sought`:
    a top-level `def` of one of them and a placement or a call of a name it imports from the
    workspace (`_local_imports`: a helper's helper in a third module), a re-export of one of them
    by a `from ... import`, a class of them with a placement and a method the importer calls, or,
    in a package's `__init__` (which re-exports its modules' helpers), one of them at all. Most imported modules hold none, and parsing each just to see
    cost more than the rest of many small files' analysis."""
    if not sought:
        return None
    located = workspace.locate(importer, dotted, level)
    if located is None:
        return None
    path, text = located
    if path.endswith("__init__.py"):
        wanted = not sought.isdisjoint(_words(text))
    else:
        defined = _top_defs(text)
        classes = _placing_classes(text)
        wanted = (
            (not sought.isdisjoint(defined) and _may_place(text))
            or (not sought <= defined and not sought.isdisjoint(_local_imports(text)))
            or any(not classes.get(name, frozenset()).isdisjoint(importer.call_index) for name in sought)
        )
    if not wanted:
        return None
    found = workspace.module(path, text)
    return found if found is not importer else None


_TOP_DEF = re.compile(
    r"^(?:(?:async[ \t]+)?def[ \t]+(\w+)|(\w+)[ \t]*=[ \t]*(?:lambda\b|[\w.]*jit\())", re.MULTILINE
)
_CLASS = re.compile(r"^class[ \t]+(\w+)", re.MULTILINE)
_NEXT_TOP_LEVEL = re.compile(r"^[^\s#]", re.MULTILINE)
_METHOD = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
_LAMBDA_BOUND = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*lambda\b", re.MULTILINE)
_FROM_IMPORT = re.compile(r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=512)
def _top_defs(text: str) -> frozenset[str]:
    """The names of a module's top-level functions (`def`s, lambdas and jitted functions bound
    to a name), read from its text (cached by text)."""
    return frozenset(name for pair in _TOP_DEF.findall(text) for name in pair if name)


@functools.lru_cache(maxsize=128)
def _placing_classes(text: str) -> dict[str, frozenset[str]]:
    """The module's top-level classes whose text mentions a placement, with their methods'
    names (`__init__` aside), read from its text (cached by text): most imported classes (a
    model, a config) place nothing, or nothing through a method their importer calls by name."""
    found: dict[str, frozenset[str]] = {}
    for match in _CLASS.finditer(text):
        end = _NEXT_TOP_LEVEL.search(text, match.end())
        chunk = text[match.start() : end.start() if end else len(text)]
        if any(word in chunk for word in PLACEMENTS):
            found[match.group(1)] = frozenset(_METHOD.findall(chunk)) - {"__init__"}
    return found


@functools.lru_cache(maxsize=128)
def _local_imports(text: str) -> frozenset[str]:
    """The names a module's top-level `from ... import`s bring from other than the modelled
    libraries (a helper may be among them), read from its text (cached by text)."""
    return frozenset(
        word
        for dots, dotted, names in _FROM_IMPORT.findall(text)
        if dots or dotted.split(".", 1)[0] not in MODELLED_LIBRARIES
        for word in _WORD.findall(names)
        if word not in ("import", "as")
    )


@functools.lru_cache(maxsize=512)
def _may_place(text: str) -> bool:
    """Whether a module's text holds a placement, or calls a name it imports from the workspace
    (cached by text: every file importing the module asks, and each test scanned the whole text
    for each of a dozen words)."""
    return any(word in text for word in PLACING_WORDS) or any(
        f"{name}(" in text for name in _local_imports(text)
    )


@functools.lru_cache(maxsize=128)
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text))


def _exported(workspace: Workspace, module: ModuleInfo | None, names: Iterable[str]) -> set[str]:
    """Those of `names` that are helpers of `module`. Only a name the module defines as a helper
    or imports at top level can be one (`_places`), or a function of a module that calls what it
    imports from the workspace (`helpers_of`, read once): the others, most of the names a module
    calls, are not looked for among its imports one by one (42,000 times in a check of maxtext)."""
    if module is None:
        return set()
    imported = {
        alias.asname or alias.name
        for stmt in module.top_imports
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
        if alias.name != "*"
    }
    possible = module.placing_functions | imported
    found = {name for name in names if name in possible and _places(workspace, module, name, MAX_REEXPORTS)}
    text = module.source.text
    others = {name for name in names if name in _top_defs(text)} - possible
    if others and not _local_imports(text).isdisjoint(module.call_index):
        found |= others & helpers_of(workspace, module)
    return found


@per_snapshot
def _places(workspace: Workspace, module: ModuleInfo, name: str, depth: int) -> bool:
    """Whether `name` in `module` is a placing function, re-exports one by a top-level
    `from ... import`, or is a function of the module that passes its parameters to a helper it
    imports (read from the syntax; `depth` modules followed at most)."""
    if name in module.placing_functions:
        return True
    if depth <= 0:
        return False
    for stmt in module.top_imports:
        if not isinstance(stmt, ast.ImportFrom):
            continue
        for alias in stmt.names:
            if alias.name != "*" and (alias.asname or alias.name) == name:
                source = _module(workspace, module, stmt.module or "", stmt.level, frozenset((alias.name,)))
                if source is not None and _places(workspace, source, alias.name, depth - 1):
                    return True
    return name in _top_defs(module.source.text) and _calls_imported_helper(workspace, module, name, depth)


def _calls_imported_helper(workspace: Workspace, module: ModuleInfo, name: str, depth: int) -> bool:
    """Whether the module's top-level function `name` passes its parameters to a helper the
    module imports from another (`helpers_of` narrowed to one function: only the imports it
    calls are followed)."""
    function = next(
        (
            f
            for segment in module.source.segments
            for stmt in segment.body
            if (f := _defined(stmt)) and f.name == name
        ),
        None,
    )
    if function is None:
        return False
    called = {called_name(node) for node in ast.walk(function) if isinstance(node, ast.Call)}
    helpers = frozenset(
        local
        for stmt in module.top_imports
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
        if (local := alias.asname or alias.name) in called
        and local != name
        and _places(workspace, module, local, depth - 1)
    )
    return bool(helpers) and _is_helper(function, PLACEMENTS | module.placing_functions | helpers)


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
