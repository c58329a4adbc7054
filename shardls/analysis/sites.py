"""From calls to sites: choose the mesh, read the spec and the shape, ask the core for the layout,
and turn its problems into diagnostics placed on the code that caused them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from shardls.analysis.evaluator import Evaluator
from shardls.analysis.facts import (
    Diagnostic,
    MeshFact,
    Related,
    Site,
    SiteKind,
    Span,
)
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.site_facts import (
    built_in,
    fallback_mesh,
    guessed,
    how_to_state,
    names_all,
    new_mesh_fact,
    problem_span,
    related_places,
    selected,
    shape_assumptions,
    site_dims,
    spec_notes,
    spec_only_problems,
    symbolic_problem,
)
from shardls.analysis.site_record import SiteRecord
from shardls.analysis.values import (
    BoundMethod,
    Choice,
    Guard,
    MeshV,
    Ref,
    ShardingV,
    SpecV,
    Value,
    consistent,
    distinct,
    guarded_alternatives,
)
from shardls.analysis.walker import Visit
from shardls.analysis.walking.contexts import ASSUMED_UNDER_JIT
from shardls.core import (
    FLOAT32,
    DType,
    Layout,
    PartitionSpec,
    Problem,
    Severity,
    UsageContext,
    compute_layout,
)
from shardls.core.rules import CORE_RULES
from shardls.core.spec_checks import CONSTRUCTION_CODES

Recognizer = Callable[["SiteBuilder", Visit, CallArgs], None]
_RECOGNIZERS: dict[str, Recognizer] = {}


_STANDALONE_ONLY: set[str] = set()


def method_name(value_type: type[Value], name: str) -> str:
    """The name a method of a library value is recognized by (`IndexedV.get` for `x.at[i].get`)."""
    return f"{value_type.__name__}.{name}"


def callee_name(callee: Value) -> str | None:
    """The name recognizers know a callee by: a library function's canonical name, or a method of
    a library value (see `method_name`); None for anything else."""
    if isinstance(callee, Ref):
        return callee.qualname
    if isinstance(callee, BoundMethod):
        return method_name(type(callee.base), callee.name)
    return None


def recognizes(*qualnames: str, nested: bool = True) -> Callable[[Recognizer], Recognizer]:
    """Register a function that turns calls of these library functions (or methods, named by
    `method_name`) into sites.

    `nested=False`: calls that are an argument of a call some recognizer handles are not sites
    (the outer call's recognizer covers the inner one); they are skipped before their arguments
    are read. As an argument of any other call (`put(x, NamedSharding(...))`) they are.
    """

    def register(function: Recognizer) -> Recognizer:
        for name in qualnames:
            _RECOGNIZERS[name] = function
            if not nested:
                _STANDALONE_ONLY.add(name)
        return function

    return register


def wants(qualname: str, nested: bool) -> bool:
    return not nested or qualname not in _STANDALONE_ONLY


def recognizer_for(qualname: str) -> Recognizer | None:
    from shardls.analysis.recognizers import load

    load()
    return _RECOGNIZERS.get(qualname)


@dataclass(frozen=True)
class Via:
    """A call of a helper of another module whose placements are being recognised
    (`foreign_calls.py`): their sites and problems go on the call, as JAX meets them there."""

    span: Span
    """The call, in the analysed file."""
    note: str
    """Which helper made the site: `via put() in utils.py:12`."""
    target: str | None
    """The name the caller assigns the helper's result to."""

    @property
    def assumption(self) -> str:
        """What a problem found through the helper rests on (it is at most a warning)."""
        return f"the helper ({self.note.removeprefix('via ')}) places what it is given as shardls reads it"


VIA_ADVICE = "unless the helper changes the sharding or skips the placement, JAX rejects it here"


@dataclass
class SiteBuilder:
    """Collects the sites, meshes and diagnostics of one file."""

    evaluator: Evaluator
    library: Library
    path: str
    device_count: int
    device_count_note: str | None
    """Set when the device count is not read from the program: shown wherever it matters."""
    device_count_default: bool
    """Nobody stated the device count: what depends on it is an assumption."""
    fallback_mesh: MeshFact | None
    file_meshes: list[MeshFact]
    default_dtype: DType = FLOAT32
    sites: list[Site] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    record: SiteRecord = field(default_factory=SiteRecord)
    """The meshes made and the sites and reports seen, shared by every part of the analysis."""
    guard: frozenset[Guard] = frozenset()
    """The `if` branches of the call being recognised: a dimension that depends on a condition
    expands only to the outcomes of those branches."""
    via: Via | None = None
    """Set while the placements of a helper of another module are recognised: a place in that
    module means the call of the helper here."""

    # -- meshes -----------------------------------------------------------------------------

    def mesh_fact(self, value: MeshV, name: str | None = None) -> MeshFact:
        """The resolved mesh of a MeshV (device count applied), reporting its problems once."""
        key: object = (value.path, value.span, value.mesh) if value.span is not None else id(value)
        known = self.record.mesh(key)
        if known is not None:
            # The same mesh read with an assumption of its own (a global rebound below).
            extra = tuple(a for a in value.assumptions if a not in known.assumed)
            if not extra:
                return known
            return replace(known, assumptions=(*known.assumptions, *extra), assumed=(*known.assumed, *extra))
        fact, problems = new_mesh_fact(
            value, name, self.path, self.device_count, self.device_count_note, self.device_count_default
        )
        self.record.add_mesh(key, fact)
        if value.span is not None and (value.path in (None, self.path)):
            for problem, rests_on in problems:
                self.report(value.span, problem, assumed=rests_on)
        return fact

    def select_mesh(
        self,
        sharding: ShardingV | None,
        visit: Visit,
        usage: UsageContext,
        span: Span,
        *,
        legacy_serves: bool = False,
    ) -> MeshFact | None:
        """Which mesh applies to a sharding used here, saying why; reports a bare spec that JAX
        would reject for lack of a `jax.set_mesh` context. `legacy_serves`: the API still reads
        the deprecated `with mesh:` (pjit)."""
        if sharding is not None and sharding.mesh is not None:
            return selected(self.mesh_fact(sharding.mesh), "the mesh of the NamedSharding")
        context = visit.context.mesh
        if sharding is not None and not sharding.bare:
            # A NamedSharding whose mesh is not known here (`NamedSharding(args.mesh, ...)`): JAX
            # lays it out on that mesh whatever the context, so the context's mesh only stands in.
            if context is None:
                return self.fallback_for(span)
            return guessed(
                self.mesh_fact(context.mesh), f"{context.how}, standing in for the NamedSharding's own mesh"
            )
        if context is not None and not context.legacy:
            return selected(self.mesh_fact(context.mesh), context.how)
        if context is not None and context.legacy:
            if usage in (UsageContext.WSC, UsageContext.WSC_EAGER) or legacy_serves:
                return selected(self.mesh_fact(context.mesh), context.how + " (deprecated)")
            self.report(
                span,
                Problem(
                    "SH202",
                    Severity.ERROR,
                    f"a bare PartitionSpec in {usage.label} needs `jax.set_mesh`; the deprecated "
                    "`with mesh:` only serves with_sharding_constraint",
                ),
            )
            return selected(self.mesh_fact(context.mesh), context.how + " (deprecated; not used by JAX here)")
        if sharding is not None and sharding.bare and not visit.context.unknown_caller:
            # In a function with no visible caller the mesh context is unknown: a caller elsewhere
            # may well run it under `jax.set_mesh`.
            self.report(
                span,
                Problem(
                    "SH202",
                    Severity.ERROR,
                    f"a bare PartitionSpec in {usage.label} needs a mesh: wrap the code in "
                    "`with jax.set_mesh(mesh):` or pass NamedSharding(mesh, spec)",
                ),
            )
        return self.fallback_for(span)

    def fallback_for(self, span: Span) -> MeshFact | None:
        """No mesh is explicit here (`fallback_mesh`); through a helper of another module, the
        helper's call is the place."""
        where = self.via.span if self.via is not None else span
        return fallback_mesh(self.fallback_mesh, self.file_meshes, where.line)

    # -- layouts ----------------------------------------------------------------------------

    def add_layout(
        self,
        kind: SiteKind,
        visit: Visit,
        span: Span,
        name: str | None,
        spec: SpecV,
        shape: tuple[Value, ...] | None,
        dtype: DType | None,
        usage: UsageContext,
        mesh: MeshFact | None,
        *,
        logical_spec: PartitionSpec | None = None,
        rule_chain: tuple[str, ...] = (),
        assumptions: Iterable[str] = (),
        assumed: Iterable[str] = (),
        spec_span: Span | None = None,
        superseded: Callable[[Problem], bool] | None = None,
        shape_reason: str | None = None,
        sharding: ShardingV | None = None,
    ) -> Site | None:
        """Record a site and report the core's problems; returns the site (None if a duplicate).

        `assumptions` are notes shown with the layout; `assumed` are those of them its problems
        rest on (a prediction of the compiler's choice), which make an error a warning, as do the
        mesh's own assumptions and dimensions computed from the default device count. A mesh
        shardls picked (`MeshFact.fallback`) gives a layout and no problem at all.
        `superseded` marks core problems the caller has already reported in a more specific way
        (e.g. an unknown axis that is an unmapped logical name), so they are not reported twice.
        A dimension that depends on a condition gives one site per outcome. `sharding`: the
        sharding placed here, so that the site of the `NamedSharding(...)` that built it (in this
        file) can list this use (`Site.sharding_span`)."""
        if shape is not None and any(isinstance(size, Choice) for size in shape):
            last = None
            variants = guarded_alternatives(shape)
            taken = [variant for variant, guard in variants if consistent(guard | self.guard)]
            for variant in taken or [variant for variant, _ in variants]:
                last = (
                    self.add_layout(
                        kind,
                        visit,
                        span,
                        name,
                        spec,
                        variant,
                        dtype,
                        usage,
                        mesh,
                        logical_spec=logical_spec,
                        rule_chain=rule_chain,
                        assumptions=assumptions,
                        assumed=assumed,
                        spec_span=spec_span,
                        superseded=superseded,
                        shape_reason=shape_reason,
                        sharding=sharding,
                    )
                    or last
                )
            return last
        # A spec written elsewhere (`sharding = NamedSharding(mesh, P(...))` reused by several
        # device_puts, or `from config import SPEC`) is not wrong where it is written: JAX fails at
        # the use. Diagnostics go on the site, with the spec's place as related information.
        if self.via is not None:  # the recognizer's places are in the helper's file
            span, spec_span = self.via.span, None
        foreign_spec = spec.span is not None and (
            spec.path not in ((self.path,) if self.via else (None, self.path)) or not spec.span.within(span)
        )
        spec_span = spec_span or (span if foreign_spec else spec.span) or span
        notes = list(assumptions)
        if visit.context.call_site:
            notes.append(f"arguments from {visit.context.call_site}")
        if self.via is not None:
            notes.append(self.via.note)
        notes.extend(spec_notes(spec))
        if mesh is not None and mesh.fallback and not names_all(mesh.mesh, spec.spec):
            # A mesh shardls picked that lacks an axis of the spec is not the one that applies.
            mesh = None
        dims, provenance, symbolic = site_dims(shape, self.path)
        built = built_in(sharding, self.path)
        shape_assumed = shape_assumptions(shape) if shape else []
        notes.extend(shape_assumed)  # a size computed from the default device count says so
        if dtype is None and dims is not None:  # the bytes shown rest on a dtype nobody wrote
            notes.append(f"dtype not known here: bytes assume {self.default_dtype.name}")
        uncertain = [*assumed, *shape_assumed]
        layout: Layout | None = None
        if mesh is not None:
            notes.extend(mesh.assumptions)
            uncertain.extend(mesh.assumed)
            if mesh.mesh.is_resolved:
                concrete = (
                    tuple(d if isinstance(d, int) else mesh.mesh.size for d in dims)
                    if dims is not None
                    else None
                )
                if concrete is not None:
                    layout = compute_layout(
                        mesh.mesh, spec.spec, concrete, dtype or self.default_dtype, usage
                    )
                    # Mesh problems (SH1xx) are reported once, at the mesh.
                    problems = [
                        p
                        for p in layout.problems
                        if not symbolic_problem(p, symbolic) and not p.code.startswith("SH1")
                    ]
                else:
                    problems = list(spec_only_problems(mesh.mesh, spec.spec, usage))
                related = related_places(mesh, spec if foreign_spec else None)
                # Padding rests on the jit that traces the constraint, which may only be assumed.
                padded = (
                    [*uncertain, ASSUMED_UNDER_JIT]
                    if usage is UsageContext.WSC and not visit.context.inside_jit
                    else uncertain
                )
                for problem in problems if not mesh.fallback else ():
                    if superseded is not None and superseded(problem):
                        continue
                    self.report(
                        spec_span if foreign_spec else problem_span(problem, spec, spec_span, span),
                        problem,
                        related,
                        site_name=name,
                        spec=spec,
                        assumed=tuple(padded if problem.code == "SH007" else uncertain),
                        raised_at=built if problem.code in CONSTRUCTION_CODES else None,
                    )
        key = (kind, span, name, str(dims), spec.spec, id(mesh.mesh) if mesh else None, usage)
        if not self.record.first_time(key):
            return None
        site = Site(
            kind,
            span,
            name,
            usage,
            mesh,
            spec.spec,
            logical_spec,
            rule_chain,
            dims,
            dtype or self.default_dtype,
            layout,
            symbolic,
            distinct(notes),
            provenance,
            spec_span,
            self.path,
            shape_reason=shape_reason if dims is None else None,
            sharding_span=built,
        )
        self.sites.append(site)
        return site

    # -- diagnostics ------------------------------------------------------------------------

    def report(
        self,
        span: Span,
        problem: Problem,
        related: tuple[Related, ...] = (),
        *,
        site_name: str | None = None,
        spec: SpecV | None = None,
        assumed: Iterable[str] = (),
        raised_at: Span | None = None,
    ) -> None:
        """Turn a problem into a diagnostic. One that rests on an assumption (`assumed`, e.g. the
        default device count) is at most a warning that says what was assumed: only facts from
        the code and the user's settings make an error. One found through a helper of another
        module rests on reading its code exactly (`Via.assumption`): a helper that rewrites the
        spec under a condition shardls cannot decide (axlearn's `maybe_shard` drops the axes a
        `shard_map` made Manual) would otherwise make a false error at every call. `raised_at`:
        see `Diagnostic.raised_at`."""
        via: tuple[str, ...] = ()
        if self.via is not None:
            via = (self.via.assumption,)
            if not span.within(self.via.span):
                span = self.via.span  # a place in the helper's file: the call here
        if self.record.first_time((span, problem.code, problem.message)):
            self.diagnostics.append(
                diagnostic_of(span, problem, related, site_name, spec, assumed, via, raised_at)
            )


def diagnostic_of(
    span: Span,
    problem: Problem,
    related: tuple[Related, ...],
    site_name: str | None,
    spec: SpecV | None,
    assumed: Iterable[str],
    via: tuple[str, ...],
    raised_at: Span | None,
) -> Diagnostic:
    """A problem as the diagnostic `SiteBuilder.report` describes, with the data quick fixes
    reuse; what it rests on (`assumed`, then `via`) is named in its message."""
    data = dict(problem.data)
    if site_name:
        data["site"] = site_name
    if spec is not None:
        data["spec"] = spec.spec.to_json()
    rule = CORE_RULES.get(problem.code)
    deprecated = problem.code in ("SH203", "SH204") or (rule is not None and "deprecated" in rule.name)
    stated = distinct(assumed)
    basis = (*stated, *via)
    severity, message = problem.severity, problem.message
    if basis:
        data["assumptions"] = list(basis)
        advice = [how_to_state(stated)] if stated else []
        message += f" (if {'; '.join(basis)}: {'; '.join([*advice, *(VIA_ADVICE for _ in via)])})"
        if severity is Severity.ERROR:
            severity = Severity.WARNING
    return Diagnostic(span, problem.code, severity, message, related, deprecated, data, basis, raised_at)
