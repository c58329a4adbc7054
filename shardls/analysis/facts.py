"""What the analysis found in one file: sites with their layouts, meshes and diagnostics.

These dataclasses are the contract between the analyzer and every rendering (CLI, hover,
inlay hints, code actions). Positions are 0-based lines and 0-based character columns (Python
string indices); renderings convert to 1-based or UTF-16 as their format needs.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from shardls.core import DType, Layout, Mesh, PartitionSpec, Severity, UsageContext
from shardls.core.movement import DataMovement


@dataclass(frozen=True, order=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, line: int, column: int) -> bool:
        if (line, column) < (self.line, self.column):
            return False
        return (line, column) <= (self.end_line, self.end_column)

    def within(self, outer: Span) -> bool:
        """Whether this span lies inside `outer` (ends included)."""
        return (outer.line, outer.column) <= (self.line, self.column) and (
            self.end_line,
            self.end_column,
        ) <= (
            outer.end_line,
            outer.end_column,
        )


class SiteKind(enum.Enum):
    SPEC = "spec"
    NAMED_SHARDING = "named_sharding"
    DEVICE_PUT = "device_put"
    CONSTRAINT = "with_sharding_constraint"
    RESHARD = "reshard"
    CREATION = "array_creation"
    SHAPE_DTYPE_STRUCT = "shape_dtype_struct"
    JIT_IN = "jit_in_sharding"
    JIT_OUT = "jit_out_sharding"
    SHARD_MAP_IN = "shard_map_in"
    SHARD_MAP_OUT = "shard_map_out"
    PARAM = "param"
    ARRAY_TYPE = "array_type"
    """An array computed from arrays of known sharded type (Explicit axes): `y = x @ w`."""
    ARRAY_NAME = "array_name"
    """A name bound to an array of known sharded type, where the code reads or assigns it: for
    hovers only (the expression that computes the array is its ARRAY_TYPE site)."""


@dataclass(frozen=True)
class MeshFact:
    """A mesh as the analysis resolved it, and why this one applies."""

    mesh: Mesh
    span: Span | None
    """Where it is defined (None for a pragma/setting mesh)."""
    name: str | None
    """The variable holding it, when there is one."""
    source: str
    """Where it comes from, e.g. `jax.make_mesh at line 3`, `pragma`, `default-mesh setting`."""
    selection: str = ""
    """Why it applies at a site: `NamedSharding argument`, `jax.set_mesh at line 9`, `the only mesh in this file`."""
    assumptions: tuple[str, ...] = ()
    path: str | None = None
    assumed: tuple[str, ...] = ()
    """The assumptions among `assumptions` (nobody stated them): problems that depend on them
    are at most warnings."""
    fallback: bool = False
    """Chosen by shardls because the code does not say which mesh applies (the only mesh of the
    file or workspace, the nearest one above): good enough to show a layout, never to decide a
    problem, since at run time another mesh may well apply."""


@dataclass(frozen=True)
class SymbolicDim:
    """A dimension whose size is not known statically; rendered by name (`d_model`)."""

    name: str


Dim = int | SymbolicDim


@dataclass(frozen=True)
class ShardDim:
    """One dimension of the per-device shape, as far as the facts go: the global size, the mesh
    axes the spec splits it over, and the product of their sizes when the mesh is known.

    With an unknown mesh (a `mesh` parameter of a helper) the spec still says which dimensions
    are split over which named axes, so the per-device size is a formula (`batch/|data|`) and
    each split dimension needs a divisibility that nobody can check here."""

    size: Dim
    axes: tuple[str, ...]
    factor: int | None
    """Product of the axes' sizes; None when the mesh is not known here (1 when unsplit)."""

    @property
    def per_device(self) -> int | None:
        """The number of elements one device holds along this dimension, when both are known."""
        if isinstance(self.size, SymbolicDim) or self.factor is None:
            return None
        return -(-self.size // self.factor) if self.factor > 1 else self.size

    @property
    def undecided(self) -> bool:
        """Split over some axis, and its divisibility cannot be checked: a size or a factor is unknown."""
        return bool(self.axes) and (isinstance(self.size, SymbolicDim) or self.factor is None)


@dataclass(frozen=True)
class Site:
    """A place where a layout is decided, with everything the renderings need."""

    kind: SiteKind
    span: Span
    name: str | None
    context: UsageContext
    mesh: MeshFact | None
    spec: PartitionSpec | None
    """After logical rules."""
    logical_spec: PartitionSpec | None = None
    """Before logical rules, when rules were applied."""
    rule_chain: tuple[str, ...] = ()
    shape: tuple[Dim, ...] | None = None
    dtype: DType | None = None
    layout: Layout | None = None
    """The core's result; for symbolic dims it is computed with placeholders (see `symbolic_dims`)."""
    symbolic_dims: tuple[int, ...] = ()
    assumptions: tuple[str, ...] = ()
    provenance: tuple[str, ...] = ()
    """One line per number that mattered: `dim 0 = 512: argument of MLP(...) at line 40`."""
    spec_span: Span | None = None
    path: str | None = None
    jax_type: str | None = None
    """`jax.typeof` of the array in JAX's notation (`float32[8@X,16@Y]`), for sharding in types."""
    type_sources: tuple[str, ...] = ()
    """Where each mesh axis of the type entered it (`X: device_put at line 4`)."""
    compiler_chosen: tuple[str, ...] = ()
    """Auto axes of the mesh: where the data lies along them is the compiler's choice."""
    movement: DataMovement | None = None
    """For a placement of an array whose layout was known: what each device must receive."""
    shape_reason: str | None = None
    """Why the array's shape is not known here, when it is not (`parameter 'x'` of a function
    no call reaches with a known array)."""
    sharding_span: Span | None = None
    """Where the `NamedSharding(...)` this site places with is built, when this file builds it
    (`s = NamedSharding(mesh, P(...))` lines above, or in a helper that returns it): that call's
    `named_sharding` site lists this one among its `uses`."""
    uses: tuple[Site, ...] = ()
    """For a `named_sharding` site: the placements of this file that use the sharding it builds
    (`device_put(x, s)`, `jit(..., in_shardings=s)`, ...), in file order. When every use whose
    shape is known agrees on one shape, per-device shape and dtype, the site takes them (and the
    uses' layout and assumptions); otherwise its shape stays unknown and the uses say what it
    meets (`analysis/sharding_uses.py`)."""

    @property
    def shard_shape(self) -> tuple[Dim, ...] | None:
        """Per-device shape, with symbolic dims as `SymbolicDim('d_model/4')`."""
        if self.layout is None or self.layout.shard_shape is None or self.shape is None:
            return None
        out: list[Dim] = []
        for dim, (size, factor) in enumerate(zip(self.shape, self.layout.dim_factors)):
            if isinstance(size, SymbolicDim):
                out.append(SymbolicDim(size.name if factor == 1 else f"{size.name}/{factor}"))
            else:
                out.append(self.layout.shard_shape[dim])
        return tuple(out)

    @property
    def shard_dims(self) -> tuple[ShardDim, ...] | None:
        """The per-device shape dimension by dimension, also when the mesh is not known here.

        None when the array's rank is not known (never guessed from the spec's length: a spec
        may be shorter than the rank), when there is no spec, or when JAX rejects the layout on
        sizes known from the code."""
        if self.shape is None or self.spec is None:
            return None
        sizes: Mapping[str, int]
        if self.layout is not None:
            if self.rejected_by_assumed_sizes:
                sizes = {}
            elif self.layout.shard_shape is None:
                return None
            else:
                return tuple(
                    ShardDim(size, axes, factor)
                    for size, axes, factor in zip(self.shape, self.layout.dim_axes, self.layout.dim_factors)
                )
        else:
            # No layout: the mesh is not known here, or some of its sizes are not.
            sizes = self.mesh.mesh.sizes_by_name if self.mesh is not None else {}
        entries = self.spec.entry_names[: len(self.shape)]
        axes = entries + ((),) * (len(self.shape) - len(entries))
        return tuple(
            ShardDim(size, names, _known_product(names, sizes)) for size, names in zip(self.shape, axes)
        )

    @property
    def rejected_by_assumed_sizes(self) -> bool:
        """JAX rejects the layout only for a size the mesh does not divide (SH001), on a mesh whose
        sizes shardls assumed (the default device count) or chose (a fallback mesh). The real mesh
        may divide, so the per-device shape stays a formula over the axes' sizes (`4/|x|`) with
        the divisibility it needs, beside the warning that names the assumption."""
        layout, mesh = self.layout, self.mesh
        if layout is None or layout.shard_shape is not None or mesh is None:
            return False
        if not (mesh.fallback or mesh.assumed):
            return False
        return {problem.code for problem in layout.problems if problem.is_error} == {"SH001"}

    @property
    def min_rank(self) -> int | None:
        """When the rank is not known: the least rank the spec allows (JAX rejects a spec longer
        than the array's rank)."""
        return len(self.spec) if self.shape is None and self.spec is not None else None

    @property
    def bytes_per_device(self) -> int | None:
        if self.symbolic_dims or self.layout is None or self.rejected_by_assumed_sizes:
            return None
        return self.layout.bytes_per_device


def _known_product(axes: tuple[str, ...], sizes: Mapping[str, int]) -> int | None:
    """The number of parts `axes` split a dimension into, when every size is known."""
    known = [sizes.get(axis, 0) for axis in axes]
    return math.prod(known) if all(size >= 1 for size in known) else None


@dataclass(frozen=True)
class Related:
    span: Span
    message: str
    path: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    span: Span
    code: str
    severity: Severity
    message: str
    related: tuple[Related, ...] = ()
    deprecated: bool = False
    data: Mapping[str, object] = field(default_factory=dict)
    """Numbers and names that quick fixes reuse (the core problem's data plus site details)."""
    assumptions: tuple[str, ...] = ()
    """What the problem rests on beyond the code and the user's settings (the default device
    count, a mesh chosen by shardls): a diagnostic with assumptions is never an error."""
    raised_at: Span | None = None
    """For what JAX raises where a sharding is built (an unknown or repeated axis), found where
    the sharding is used: the `NamedSharding(...)` of this file that built it. JAX stops there,
    so the report at that call makes this one redundant (`file_diagnostics.reported`)."""


@dataclass(frozen=True)
class DeviceCount:
    count: int
    source: str
    """`pragma at line 1`, `XLA_FLAGS hint at line 3`, `--device-count`, `default`."""
    assumed: bool = True
    """Not read from the program itself (a pragma, a setting, the default): shown beside figures."""
    default: bool = False
    """Nobody stated it: the problems that depend on it rest on an assumption."""


LONG_SITE_LINES = 64
"""Sites spanning more lines than this are not indexed per line but checked on every lookup, so
that the index stays proportional to the file even when calls span whole pages."""


@dataclass(frozen=True)
class FileAnalysis:
    path: str
    sites: tuple[Site, ...]
    meshes: tuple[MeshFact, ...]
    diagnostics: tuple[Diagnostic, ...]
    device_count: DeviceCount
    parse_errors: tuple[tuple[int, str], ...] = ()
    suppressed: tuple[Diagnostic, ...] = ()
    """Diagnostics a suppression comment on their line silenced: not reported, but kept so that
    SARIF can list them as suppressed in source (code scanning shows them as dismissed)."""
    names: tuple[Site, ...] = ()
    """Names bound to arrays of known sharded type where the code reads or assigns them
    (`SiteKind.ARRAY_NAME`): places to hover, not layouts, so they are not among `sites`."""

    def sites_on(self, line: int) -> list[Site]:
        """The sites (and typed names) whose call or spec covers `line` (in file order, then those
        spanning many lines): a hover looks up its line instead of scanning the thousands of
        sites of a long file."""
        return self._site_lines.on(line)

    def diagnostics_on(self, first: int, last: int) -> list[Diagnostic]:
        """The diagnostics that touch any line from `first` to `last`, each once, in file order."""
        found = {id(d): d for line in range(first, last + 1) for d in self._diagnostic_lines.on(line)}
        return sorted(found.values(), key=lambda d: self._diagnostic_order[id(d)])

    def index_lines(self, previous: FileAnalysis | None = None) -> None:
        """Build the per-line lookups now: a server does it in its analysis thread, so that the
        first hover after an analysis does not pay for them. `previous`: an analysis of the same
        file whose lookups are built, which this one's are made from where it has the same
        sites and diagnostics (the very objects: an edit keeps those it did not touch), instead
        of going over all of them (18 ms of an edit of a 20k-line file's 4,444 sites)."""
        if previous is not None and previous.path == self.path:
            made = vars(previous)
            if "_site_lines" in made and "_site_lines" not in vars(self):
                before = (*previous.sites, *previous.names)
                now = (*self.sites, *self.names)
                self.__dict__["_site_lines"] = previous._site_lines.updated(before, now, _spans_of)
            if "_diagnostic_lines" in made and "_diagnostic_lines" not in vars(self):
                self.__dict__["_diagnostic_lines"] = previous._diagnostic_lines.updated(
                    previous.diagnostics, self.diagnostics, _diagnostic_spans
                )
        self.sites_on(0)
        self.diagnostics_on(0, 0)

    @functools.cached_property
    def _site_lines(self) -> _LineIndex[Site]:
        return _LineIndex.of((*self.sites, *self.names), _spans_of)

    @functools.cached_property
    def _diagnostic_lines(self) -> _LineIndex[Diagnostic]:
        return _LineIndex.of(self.diagnostics, _diagnostic_spans)

    @functools.cached_property
    def _diagnostic_order(self) -> dict[int, int]:
        return {id(d): index for index, d in enumerate(self.diagnostics)}

    @functools.cached_property
    def all_meshes(self) -> tuple[MeshFact, ...]:
        """Every mesh the file defines or its sites use, each once, definitions first."""
        unique: dict[object, MeshFact] = {}
        for fact in (*self.meshes, *(site.mesh for site in self.sites if site.mesh)):
            unique.setdefault((fact.mesh, fact.span, fact.path), fact)
        return tuple(unique.values())


_Item = TypeVar("_Item")


@dataclass(frozen=True)
class _LineIndex(Generic[_Item]):
    """Items by the lines their spans cover; items spanning more than LONG_SITE_LINES lines are
    checked on every lookup, so that the index stays proportional to the file."""

    by_line: dict[int, list[_Item]]
    long: list[tuple[_Item, list[Span]]]

    @classmethod
    def of(cls, items: Iterable[_Item], spans_of: Callable[[_Item], list[Span]]) -> _LineIndex[_Item]:
        by_line: dict[int, list[_Item]] = {}
        long: list[tuple[_Item, list[Span]]] = []
        _index_into(items, spans_of, by_line, long)
        return cls(by_line, long)

    def updated(
        self, before: Sequence[_Item], now: Sequence[_Item], spans_of: Callable[[_Item], list[Span]]
    ) -> _LineIndex[_Item]:
        """The index of `now`, made from this one, the index of `before`: only the lines of the
        items that came or went are made again (by identity: the same object has the same
        spans). Made whole when a quarter of them differ (an Enter moves every site below it)."""
        was = {id(item) for item in before}
        kept = {id(item) for item in now}
        came = [item for item in now if id(item) not in was]
        gone = [item for item in before if id(item) not in kept]
        if not came and not gone:
            return self
        if len(came) + len(gone) > len(now) // 4:
            return _LineIndex.of(now, spans_of)
        order = {id(item): index for index, item in enumerate(now)}
        by_line = dict(self.by_line)
        long = [(item, spans) for item, spans in self.long if id(item) in kept]
        touched: set[int] = set()
        added: dict[int, list[_Item]] = {}
        for item in gone:
            spans = spans_of(item)
            if not _long(spans):
                touched.update(_covered(spans))
        touched.update(_index_into(came, spans_of, added, long))
        for line in touched:
            items = [item for item in self.by_line.get(line, ()) if id(item) in kept] + added.get(line, [])
            if items:
                by_line[line] = sorted(items, key=lambda item: order[id(item)])
            else:
                by_line.pop(line, None)
        long.sort(key=lambda pair: order[id(pair[0])])
        return _LineIndex(by_line, long)

    def on(self, line: int) -> list[_Item]:
        covering = (item for item, spans in self.long if any(s.line <= line <= s.end_line for s in spans))
        return [*self.by_line.get(line, ()), *covering]


def _index_into(
    items: Iterable[_Item],
    spans_of: Callable[[_Item], list[Span]],
    by_line: dict[int, list[_Item]],
    long: list[tuple[_Item, list[Span]]],
) -> set[int]:
    """Index `items` by the lines they cover, or among the long ones; the lines indexed."""
    lines: set[int] = set()
    for item in items:
        spans = spans_of(item)
        if _long(spans):
            long.append((item, spans))
            continue
        for line in _covered(spans):
            by_line.setdefault(line, []).append(item)
            lines.add(line)
    return lines


def _long(spans: list[Span]) -> bool:
    """Spans an item is checked by on every lookup instead of being indexed by line."""
    return any(span.end_line - span.line > LONG_SITE_LINES for span in spans)


def _covered(spans: list[Span]) -> Iterable[int]:
    """The lines the spans cover, each once, in order: one range when they overlap or touch (a
    call and the spec written inside it, nearly every site), which is built without a set."""
    first = spans[0]
    if len(spans) == 1:
        return range(first.line, first.end_line + 1)
    if len(spans) == 2:
        second = spans[1]
        if second.line <= first.end_line + 1 and first.line <= second.end_line + 1:
            return range(min(first.line, second.line), max(first.end_line, second.end_line) + 1)
    return sorted({line for span in spans for line in range(span.line, span.end_line + 1)})


def _diagnostic_spans(diagnostic: Diagnostic) -> list[Span]:
    return [diagnostic.span]


def _spans_of(site: Site) -> list[Span]:
    """The call and the spec: a spec written elsewhere (`spec = P(...)` lines above) is a second place."""
    return [span for span in (site.span, site.spec_span) if span is not None]
