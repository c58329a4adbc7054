"""The results of a file's top-level segments, kept from one analysis to the next with what each
read, so that after an edit only the segments whose text or reads changed are analysed again.

A result is kept by its segment object: the parser hands back the very same object for a segment
whose text and place are unchanged (`SegmentParser.parse`), so the object says "same text, same
lines". What the results read is indexed the other way round (`_readers`): names of this module,
names whose callers were searched, other modules. An edit changes a few of those
(`ModuleInfo.changed_since` says which, from how the module's scope and call index were made
from the previous text's), and only their readers are analysed again: checking every kept result
against every name it read took a fifth of an edit's analysis of a 20k-line file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeVar, cast

from shardls.analysis.data_file import DataFile
from shardls.analysis.evaluator import Reads
from shardls.analysis.facts import Diagnostic, Site, SiteKind
from shardls.analysis.line_shift import LineMap, Plans, Shifter, Unshiftable, line_map, rebuilt
from shardls.analysis.literal_lines import file_lines
from shardls.analysis.method_units import MethodEdit, UnitResult, method_edit
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.sharded.typing_pass import placed_type
from shardls.analysis.source import Segment
from shardls.analysis.workspace import Version, Workspace

_Key = tuple[str, str]
"""What a result read: ("name", n) for a name of the file's module, ("callee", n) for a name
whose calls were searched, ("module", path) for another module of the workspace, ("method",
"Class.m") for a method of a class of the file looked up (`Reads.methods`)."""


class Kept(Protocol):
    """A segment's kept result, as `FileCache` indexes it: by what it read."""

    @property
    def reads(self) -> frozenset[_Key]: ...

    @property
    def modules(self) -> tuple[tuple[str, Version], ...]: ...

    def moved(self, shifter: Shifter) -> Self:
        """The result at the lines an edit moved it to (raises `Unshiftable`)."""
        ...


R = TypeVar("R", bound=Kept)


@dataclass(frozen=True)
class SegmentResult:
    """The sites and diagnostics one segment produced, and what they depended on besides the
    segment's own text."""

    sites: list[Site]
    placed: tuple[Site, ...]
    """Each site as `placed_type` gives it (what `merge_types` reports of a site nothing folds
    into), found once for the result's life."""
    order: tuple[SiteOrder, ...]
    """`site_order` of each site, found once for the result's life."""
    typed: bool
    """Some site is a typed result (`merge_types` has something to fold or drop)."""
    diagnostics: list[Diagnostic]
    reads: frozenset[_Key]
    modules: tuple[tuple[str, Version], ...]
    """The other modules read, in the version read (None: there was none)."""
    steps: Steps
    """What the segment's analysis took of its statement budget, which grows with its text."""
    units: tuple[UnitResult, ...] | None = None
    """The results of the statements of a class's body analysed one at a time (`method_units`),
    whose concatenation the fields above are (None: the segment was analysed as a whole)."""

    def moved(self, shifter: Shifter) -> SegmentResult:
        trusted = not self.modules
        sites = cast(list[Site], shifter.values(self.sites, trusted))
        placed = cast(list[Site], shifter.values(self.placed, trusted))
        diagnostics = cast(list[Diagnostic], shifter.values(self.diagnostics, trusted))
        if _same(sites, self.sites) and _same(placed, self.placed) and _same(diagnostics, self.diagnostics):
            return self
        order = tuple(site_order(site) for site in sites)
        units = None if self.units is None else tuple(unit.moved(shifter) for unit in self.units)
        changes = {"sites": sites, "placed": tuple(placed), "order": order, "diagnostics": diagnostics}
        return cast(SegmentResult, rebuilt(self, {**changes, "units": units}))


def _same(made: Sequence[object], kept: Sequence[object]) -> bool:
    return all(a is b for a, b in zip(made, kept))


@dataclass(frozen=True)
class Steps:
    """The steps a segment's analysis spent of the statement budget it had: the result holds for
    the same tree under another text (another budget) when no question was cut short by either
    budget (every question had its full `Limits.steps` in both)."""

    spent: int | None
    """None: a budget ran out."""
    budget: int

    def hold_under(self, budget: int, question: int) -> bool:
        return self.spent is not None and self.spent + question <= min(budget, self.budget)


def segment_result(
    module: ModuleInfo,
    workspace: Workspace,
    sites: list[Site],
    diagnostics: list[Diagnostic],
    reads: Reads,
    steps: Steps,
) -> SegmentResult:
    """The result of a segment of `module` whose analysis read `reads`."""
    keys, modules = read_keys(module, workspace, reads)
    return _result(sites, diagnostics, keys, modules, steps, None)


def units_result(
    units: tuple[UnitResult, ...], extra: list[Diagnostic], steps: Steps, reusable: bool
) -> SegmentResult:
    """The result of a class segment analysed one statement of its body at a time (`units`),
    with `extra` diagnostics of the whole segment (its budget's end); the units are kept for
    the next edit when `reusable` (no budget ran out)."""
    sites = [site for unit in units for site in unit.sites]
    diagnostics = [d for unit in units for d in unit.diagnostics] + extra
    keys = frozenset().union(*(unit.reads for unit in units))
    modules = tuple({path: version for unit in units for path, version in unit.modules}.items())
    return _result(sites, diagnostics, keys, modules, steps, units if reusable else None)


def _result(
    sites: list[Site],
    diagnostics: list[Diagnostic],
    keys: frozenset[_Key],
    modules: tuple[tuple[str, Version], ...],
    steps: Steps,
    units: tuple[UnitResult, ...] | None,
) -> SegmentResult:
    placed = tuple(placed_type(site) for site in sites)
    order = tuple(site_order(site) for site in sites)
    typed = any(site.kind in (SiteKind.ARRAY_TYPE, SiteKind.ARRAY_NAME) for site in sites)
    return SegmentResult(sites, placed, order, typed, diagnostics, keys, modules, steps, units)


def read_keys(
    module: ModuleInfo, workspace: Workspace, reads: Reads
) -> tuple[frozenset[_Key], tuple[tuple[str, Version], ...]]:
    """What an evaluation of a segment of `module` read, as `FileCache` indexes it, and the
    other modules read in the version read. A name of another module counts as reading that
    module (a function of it read its own globals)."""
    keys: set[_Key] = {("callee", callee) for callee in reads.callees}
    modules: dict[str, Version] = dict(reads.modules)
    for path, name in reads.names:
        if path == module.path:
            keys.add(("name", name))
        elif path not in modules:
            modules[path] = workspace.current(path)
    keys.update(("module", path) for path in modules)
    keys.update(("method", method) for path, method in reads.methods if path == module.path)
    return frozenset(keys), tuple(modules.items())


SiteOrder = tuple[int, int, int, int, str]


def site_order(site: Site) -> SiteOrder:
    """How a file's sites are sorted: by span, then name. A tuple of plain values, compared without
    `Span`'s methods (sorting a 20k-line file's sites by `Span` objects took 10 ms)."""
    span = site.span
    return span.line, span.column, span.end_line, span.end_column, site.name or ""


class FileCache(Generic[R]):
    """The kept segment results of one file (of one pass over it), valid while `fingerprint`
    (what the whole pass rests on: settings, the device count, the file's meshes) is the same.

    After an edit that added or removed lines, the kept results are moved with the lines
    (`line_shift`): each result's spans and the lines its texts name, wherever they are, so a
    segment the edit only moved keeps its result, and so does one above the edit that names
    lines below it."""

    def __init__(self, fingerprint: object, path: str = "") -> None:
        self.fingerprint = fingerprint
        self.path = path
        self._module: ModuleInfo | None = None
        self._entries: dict[int, tuple[Segment, R]] = {}
        self._readers: dict[_Key, set[int]] = {}
        self._by_tree: dict[int, int] = {}
        """The key of the entry of each segment tree (its statements tuple): a segment whose
        edit left its tree as it was has it under a new text (`same_tree`)."""
        self._versions: dict[str, Version] = {}
        """The version of each other module the kept results read (None: not found then)."""
        self._shifter: Shifter | None = None
        """How the kept results move to the lines of the module being analysed (None: they
        do not move)."""
        self._moved: dict[int, int] = {}
        """The key of the entry of each segment the edit moved, by the moved segment's id."""
        self._method_edit: MethodEdit | None = None
        """The edit of the module `stale` was last asked about, when confined to one method."""
        self._plans = Plans()
        """Where what the last move of the results met holds lines (`Shifter.plans`)."""

    def fits(self, fingerprint: object, module: ModuleInfo) -> bool:
        """Whether the kept results rest on `fingerprint`, the one of an analysis of `module`:
        the same, or the same once an edit that added or removed lines moved it (the lines of
        the file's meshes below it). Prepares the results' moves."""
        self._shifter, self._moved = None, {}
        if self._module is not None and self._module is not module:
            moves = line_map(self._module, module)
            if moves is not None:
                lines, moved = moves
                self._shifter = Shifter(lines, self.path, file_lines(module), self._plans)
                self._moved = {id(now): was for was, now in moved.items() if was in self._entries}
        if fingerprint == self.fingerprint:
            return True
        if self._shifter is None:
            return False
        try:
            if self._shifter.value(self.fingerprint) != fingerprint:
                return False
        except Unshiftable:
            return False
        self.fingerprint = fingerprint
        return True

    def stale(self, module: ModuleInfo, workspace: Workspace) -> set[int]:
        """The ids of the segments whose kept results may not hold for `module` (the file's
        current module) and the workspace's current modules."""
        keys: list[_Key] = []
        self._method_edit = None
        if self._module is not None and self._module is not module:
            keys += _changed(
                self._module, module, self._readers, self._shifter.lines if self._shifter else None
            )
            replaced = _one_replaced(self._module, module)
            edit = method_edit(*replaced, self._shifter) if replaced is not None else None
            if edit is not None and all(kind != "name" or name == edit.cls for kind, name in keys):
                # Only the method changed: its readers, and the searches of what it calls.
                self._method_edit = edit
                keys = [k for k in keys if k[0] == "callee" and k[1] in edit.called] + sorted(edit.read)
        for path, version in self._versions.items():
            now = workspace.data_file(path) if isinstance(version, DataFile) else workspace.current(path)
            if now is not version:
                keys.append(("module", path))
        stale: set[int] = set()
        for key in keys:
            stale.update(self._readers.get(key, ()))
        return stale

    def replaced(self, segment: Segment) -> tuple[R, MethodEdit] | None:
        """The kept result of the segment `segment` replaced (at the lines before the edit), and
        how, when the edit of the module `stale` was last asked about is confined to one method
        of `segment`'s class (`method_units` says which statements of it to analyse again)."""
        if self._method_edit is None or self._method_edit.after is not segment:
            return None
        entry = self._entries.get(id(self._method_edit.before))
        if entry is None or entry[0] is not self._method_edit.before:
            return None
        return entry[1], self._method_edit

    def kept(self, segment: Segment, stale: set[int], carries: Callable[[Segment, R], bool]) -> R | None:
        """The result kept for `segment`, if it still holds; one that does not is dropped (the
        segment may no longer be analysed at all: a later edit must not find it). A segment the
        edit gave a new text but left its tree (`same_tree`) takes the result of the segment it
        replaces when that is not stale and `carries` says it holds under the new text; one the
        edit moved takes the result of the segment it was, moved (`fits` prepares the moves)."""
        key = self._moved.get(id(segment), id(segment))
        entry = self._entries.get(key)
        if entry is None:
            return self._carried(segment, stale, carries)
        if (key == id(segment) and entry[0] is not segment) or key in stale:
            self._forget(key)
            return None
        return self._placed(segment, key, entry[1])

    def _placed(self, segment: Segment, key: int, result: R) -> R | None:
        """`result`, kept under `key`, at the lines of the module analysed, kept for `segment`."""
        moved = result
        if self._shifter is not None:
            try:
                moved = result.moved(self._shifter)
            except Unshiftable:
                self._forget(key)
                return None
        if moved is not result or key != id(segment):
            self._forget(key)
            self.keep(segment, moved)
        return moved

    def _carried(self, segment: Segment, stale: set[int], carries: Callable[[Segment, R], bool]) -> R | None:
        key = self._by_tree.get(id(segment.body))
        if key is None:
            return None
        before, result = self._entries[key]
        if self._place(before) != segment.first_line or key in stale or not carries(segment, result):
            return None
        return self._placed(segment, key, result)

    def _place(self, segment: Segment) -> int | None:
        """The line a kept segment's first line is at in the module analysed (None: edited).
        A change made in steps (`line_map`) may have moved a segment in one step and given it
        a new text with its tree in another."""
        if self._shifter is None:
            return segment.first_line
        try:
            return self._shifter.lines.line(segment.first_line)
        except Unshiftable:
            return None

    def keep(self, segment: Segment, result: R) -> None:
        self._forget(id(segment))
        self._entries[id(segment)] = (segment, result)
        if segment.body:
            self._by_tree[id(segment.body)] = id(segment)
        for key in result.reads:
            self._readers.setdefault(key, set()).add(id(segment))
        for path, version in result.modules:
            self._versions[path] = version

    def finish(self, module: ModuleInfo, present: Iterable[Segment]) -> None:
        """After an analysis of `module`, whose segments are `present`: the results of the
        others go."""
        ids = {id(segment) for segment in present}
        for gone in self._entries.keys() - ids:
            self._forget(gone)
        self._module = module
        if self._shifter is not None:
            self._plans = self._shifter.plans
        self._shifter, self._moved = None, {}
        for path in [path for path in self._versions if ("module", path) not in self._readers]:
            del self._versions[path]

    def _forget(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        if self._by_tree.get(id(entry[0].body)) == key:
            del self._by_tree[id(entry[0].body)]
        for read in entry[1].reads:
            readers = self._readers.get(read)
            if readers is not None:
                readers.discard(key)
                if not readers:
                    del self._readers[read]


def _one_replaced(before: ModuleInfo, now: ModuleInfo) -> tuple[Segment, Segment] | None:
    """The one segment of `before` that the edit making `now` replaced, and its replacement, when
    the edit replaced one segment by one (the others it parsed again are the same objects, or
    moved copies of them)."""
    edit = now.source.edit
    if edit is None or edit.previous() is not before.source or edit.old_end != edit.new_end:
        return None
    old, new = before.source.segments, now.source.segments
    pairs = [(old[i], new[i]) for i in range(edit.first, edit.old_end) if old[i].body is not new[i].body]
    return pairs[0] if len(pairs) == 1 else None


def _changed(
    before: ModuleInfo, now: ModuleInfo, readers: dict[_Key, set[int]], lines: LineMap | None
) -> list[_Key]:
    """What kept results read that differs between two modules of the file: the names and
    callees the edit may have changed, as the module says when it was made from `before`;
    otherwise every one read is compared, at the lines an edit moved `before`'s to (`lines`)."""
    known = now.changed_since(before)
    if known is not None:
        names, callees = known
        return [("name", name) for name in names] + [("callee", callee) for callee in callees]
    found: list[_Key] = []
    for kind, name in readers:
        if kind == "name":
            differs = _moved(before.scope.binding_key(name), lines) != now.scope.binding_key(name)
        elif kind == "callee":
            differs = _moved(before.callers_key(name), lines) != now.callers_key(name)
        else:
            continue
        if differs:
            found.append((kind, name))
    return found


def _moved(key: tuple[tuple[int, int], ...], lines: LineMap | None) -> tuple[tuple[int, int], ...] | None:
    """A key of objects at lines (`Scope.binding_key`, `ModuleInfo.callers_key`) at the lines
    `lines` moved them to (None: one of them was edited)."""
    if lines is None:
        return key
    try:
        return tuple((node, lines.line(line)) for node, line in key)
    except Unshiftable:
        return None
