"""A module's scope and call index after an edit, made from those of the file's previous text:
the segments before and after the edited ones are the very same objects (`SegmentParser.parse`
keeps them), so their bindings and calls are kept and only the edited segments' are found again.
The result is what building from scratch gives (tests/analysis/test_incremental_scope.py);
when that cannot be made sure of cheaply (the edit changed what a later statement sees of a name
it binds, or where a name first appears), None tells the caller to build from scratch.

The scope is built in one pass over the module's statements, each numbered by a counter
(`Scope.order_of`) and each binding recorded in the history of its name with the number where it
takes effect. An edit that leaves the counter at the end of the edited segments where it was,
and leaves each name it touches bound to bindings of the same kinds there, changes nothing a
later statement sees: the later entries are kept as they are.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from shardls.analysis.module_info import ModuleInfo, called_names
from shardls.analysis.scope_builder import ScopeBuilder, mutated_name
from shardls.analysis.scopes import Binding, Candidates, Scope
from shardls.analysis.source import ParsedSource, Segment


@dataclass(frozen=True)
class Window:
    """The segments an edit replaced: the old ones from `first` to `old_end` became the new ones
    from `first` to `new_end`; the others are the same objects, in the same order, but those
    after it moved `delta` lines down (`Segment.moved`: the same texts and trees) when it added
    or removed lines."""

    first: int
    old_end: int
    new_end: int
    delta: int = 0

    def moved(self, old: Sequence[Segment], new: Sequence[Segment]) -> dict[int, Segment]:
        """The new segment of each old one the edit moved, by the old one's id."""
        if not self.delta:
            return {}
        return {id(was): now for was, now in zip(old[self.old_end :], new[self.new_end :])}


def edited_window(old_source: ParsedSource, new_source: ParsedSource) -> Window:
    edit = new_source.edit
    if edit is not None and edit.previous() is old_source:
        return Window(edit.first, edit.old_end, edit.new_end, edit.delta)
    old, new = old_source.segments, new_source.segments
    first = 0
    limit = min(len(old), len(new))
    while first < limit and old[first] is new[first]:
        first += 1
    tail = 0
    while tail < limit - first and old[-1 - tail] is new[-1 - tail]:
        tail += 1
    return Window(first, len(old) - tail, len(new) - tail)


def call_index_after_edit(
    old: dict[str, tuple[int, ...]], old_segments: Sequence[Segment], module: ModuleInfo, window: Window
) -> tuple[dict[str, tuple[int, ...]], frozenset[str]] | None:
    """`ModuleInfo.call_index` from the previous one, and the names whose callers may have
    changed (those called in an edited segment whose tree changed, or no longer or newly called).
    A segment the edit only moved calls what it called: a search of callers reads it at its new
    lines, which the results kept across the edit are moved to (`line_shift`)."""
    new_segments = module.source.segments
    edited = range(window.first, window.new_end)
    names = set().union(
        *(called_names(old_segments[i].text) for i in range(window.first, window.old_end)),
        *(called_names(new_segments[i].text) for i in edited),
    )
    shift = window.new_end - window.old_end
    index = {name: _renumbered(calls, window, shift) for name, calls in old.items()} if shift else dict(old)
    same = {i for i in edited if not shift and _same_place(old_segments[i], new_segments[i])}
    changed = set()
    for name in names:
        before = old.get(name, ())
        kept = [i for i in index.get(name, ()) if not window.first <= i < window.new_end]
        kept += [i for i in edited if name in called_names(new_segments[i].text)]
        calls = tuple(sorted(kept))
        if calls != before or any(i in edited and i not in same for i in calls):
            changed.add(name)
        if kept:
            index[name] = calls
        else:
            index.pop(name, None)
    return index, frozenset(changed)


def _renumbered(calls: tuple[int, ...], window: Window, shift: int) -> tuple[int, ...]:
    """The indices of the segments making calls after an edit that replaced those of `window`
    by `shift` more: the replaced ones go, those after move."""
    return tuple(
        i + shift if i >= window.old_end else i for i in calls if not window.first <= i < window.old_end
    )


def _same_place(old: Segment, new: Segment) -> bool:
    """Whether a search of callers reads the same in both: the same tree at the same lines (a
    segment whose edit left its tree as it was keeps it, `same_tree`)."""
    return old.body is new.body and old.first_line == new.first_line


@dataclass(frozen=True)
class ModuleScope:
    """A module's scope and the counter where each of its segments starts (and where the last
    ends), which the next edit's `scope_after_edit` needs."""

    scope: Scope
    counters: tuple[int, ...]
    imported: frozenset[str]
    """The names some `from ... import` binds (what `ModuleMeshes.mesh_setters` evaluates)."""
    changed: frozenset[str] | None = None
    """The names whose bindings may differ from those of the scope it was made from (None: it
    was built from scratch)."""


def module_scope(module: ModuleInfo) -> ModuleScope:
    """The scope of the whole module, built from scratch."""
    builder = ScopeBuilder(Scope("module", None, module=module))
    counters = []
    for segment in module.source.segments:
        counters.append(builder.counter)
        builder.run(segment.body, segment)
    counters.append(builder.counter)
    scope = builder.finish()
    return ModuleScope(
        scope, tuple(counters), frozenset(n for n, found in scope.bindings.items() if _imported(found))
    )


def scope_after_edit(
    old: ModuleScope, old_segments: Sequence[Segment], module: ModuleInfo, window: Window
) -> ModuleScope | None:
    """The scope of `module` made from `old`, the scope of the previous text whose segments
    `window` says the edit replaced; None when it must be built from scratch."""
    new_segments = module.source.segments
    start, end = old.counters[window.first], old.counters[window.old_end]
    replaced = old_segments[window.first : window.old_end]
    added = new_segments[window.first : window.new_end]
    before = _bound(replaced)
    names = before.names | _bound(added).names
    builder = ScopeBuilder(Scope("module", None, module=module))
    builder.counter = start
    builder.state = {name: old.scope.lookup(name, start + 1) for name in names}
    counters = []
    for segment in added:
        counters.append(builder.counter)
        builder.run(segment.body, segment)
    if builder.counter != end:
        return None
    inside = {id(segment) for segment in replaced}
    made = builder.scope
    scope = Scope(
        "module",
        None,
        dict(old.scope.history),
        dict(old.scope.final),
        dict(old.scope.order_of),
        module,
        bindings=dict(old.scope.bindings),
    )
    if not _same_order(old.scope, before.scope, made, start):
        return None
    for name in names:
        if not _same_afterwards(old.scope, builder.state, name, end, inside):
            return None
        history = [entry for entry in old.scope.history.get(name, ()) if entry[0] <= start]
        history += made.history.get(name, ())
        history += [entry for entry in old.scope.history.get(name, ()) if entry[0] > end]
        bindings = [b for b in old.scope.bindings.get(name, ()) if b.order <= start]
        bindings += made.bindings.get(name, ())
        bindings += [b for b in old.scope.bindings.get(name, ()) if b.order > end]
        _put(scope.history, name, history)
        _put(scope.bindings, name, bindings)
        if history:
            scope.final[name] = history[-1][1]
        else:
            scope.final.pop(name, None)
    for statement in before.statements:
        del scope.order_of[statement]
    scope.order_of.update(made.order_of)
    counters = [*old.counters[: window.first], *counters, *old.counters[window.old_end :]]
    imported = (old.imported - names) | {name for name in names if _imported(scope.bindings.get(name, ()))}
    moved = window.moved(old_segments, new_segments)
    if moved:
        _relocate(scope, moved)
    # A name whose bindings are the very same nodes at the same lines is unchanged for whatever
    # read it: the edit left the tree binding it as it was (`same_tree`), or only moved it (the
    # results kept across the edit are moved with it, `line_shift`).
    changed = frozenset(n for n in names if _moved_key(old.scope, n, moved) != scope.binding_key(n))
    return ModuleScope(scope, tuple(counters), imported, changed)


def _moved_key(scope: Scope, name: str, moved: dict[int, Segment]) -> tuple[tuple[int, int], ...]:
    """`Scope.binding_key` of `name` with the bindings of the segments an edit moved where it
    moved them."""
    return tuple(
        (id(b.node), moved.get(id(b.segment), b.segment).first_line) for b in scope.bindings.get(name, ())
    )


def _relocate(scope: Scope, moved: dict[int, Segment]) -> None:
    """Give the bindings of the segments an edit moved (by the old segments' ids) their moved
    segments, each binding one new object wherever the scope holds it. The scope's tables are
    its own (copies of the previous scope's); their lists are replaced, not changed."""
    made: dict[int, Binding] = {}

    def binding(b: Binding) -> Binding:
        segment = moved.get(id(b.segment))
        if segment is None:
            return b
        found = made.get(id(b))
        if found is None:
            found = made[id(b)] = replace(b, segment=segment)
        return found

    def candidates(found: Candidates) -> Candidates:
        return tuple(map(binding, found)) if any(id(b.segment) in moved for b in found) else found

    for name, bindings in scope.bindings.items():
        if any(id(b.segment) in moved for b in bindings):
            scope.bindings[name] = [binding(b) for b in bindings]
            scope.history[name] = [(order, candidates(found)) for order, found in scope.history[name]]
    for name, found in scope.final.items():
        scope.final[name] = candidates(found)


def _imported(bindings: Iterable[Binding]) -> bool:
    return any(b.kind == "importfrom" for b in bindings)


def _same_afterwards(
    old: Scope, state: dict[str, tuple[Binding, ...]], name: str, end: int, inside: set[int]
) -> bool:
    """Whether what the statements after the edit see of `name` is unchanged: the bindings that
    reach them are the same ones or new ones of the same kinds, and none of the later entries
    holds a binding of the replaced segments."""
    previous = old.lookup(name, end + 1)
    now = state.get(name, ())
    if len(previous) != len(now):
        return False
    for was, new in zip(previous, now):
        if id(was.segment) in inside:
            if id(new.segment) in inside or new.kind != was.kind:
                return False
        elif new is not was:
            return False
    return not any(
        order > end and any(id(b.segment) in inside for b in candidates)
        for order, candidates in old.history.get(name, ())
    )


def _same_order(old: Scope, replaced: Scope, made: Scope, start: int) -> bool:
    """Whether the scope's names keep their order (that of their first bindings): the names
    first bound in the edited segments are the same, in the same order, but for some no longer
    bound at all."""
    first_old = [n for n in replaced.bindings if old.bindings[n][0].order > start]
    first_new = [n for n in made.bindings if not old.bindings.get(n) or old.bindings[n][0].order > start]
    still = set(made.bindings)
    return [n for n in first_old if n in still] == first_new


T = TypeVar("T")


def _put(table: dict[str, list[T]], name: str, values: list[T]) -> None:
    if values:
        table[name] = values
    else:
        table.pop(name, None)


@dataclass(frozen=True)
class _Bound:
    names: frozenset[str]
    """Names the statements may bind (or change in place, `dims.append(n)`)."""
    statements: tuple[int, ...]
    """The ids the scope numbers them by (statements and imported names)."""
    scope: Scope
    """What the builder made of them alone (its names in the order of their first bindings)."""


_BOUND: OrderedDict[tuple[tuple[ast.stmt, ...], ...], _Bound] = OrderedDict()
"""`_bound` of the last segments asked, by their trees (kept alive by the keys): what one edit
replaced is what the edit before it added, and an edit that leaves a tree (a comment) adds what
it replaces; running a builder on a 2,000-line class twice again took a third of an edit of
maxtext's `layers/moe.py`."""
_BOUND_KEPT = 8


def _bound(segments: Sequence[Segment]) -> _Bound:
    """What a scope builder records of `segments`' statements, found by running one on them
    alone, and the receivers of calls that may change a name in place (which a builder records
    only when the name holds a value there). The scope is read only for its names and their
    order, which the trees give: the bindings' segments may be those of an earlier text."""
    key = tuple(segment.body for segment in segments)
    found = _BOUND.get(key)
    if found is None:
        found = _BOUND[key] = _bind(segments)
        while len(_BOUND) > _BOUND_KEPT:
            _BOUND.popitem(last=False)
    _BOUND.move_to_end(key)
    return found


def _bind(segments: Iterable[Segment]) -> _Bound:
    builder = ScopeBuilder(Scope("module", None))
    names: set[str] = set()
    for segment in segments:
        builder.run(segment.body, segment)
        for statement in segment.body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Expr) and (changed := mutated_name(node.value)) is not None:
                    names.add(changed)
    scope = builder.scope
    return _Bound(frozenset(names | set(scope.bindings)), tuple(scope.order_of), scope)
