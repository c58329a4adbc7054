"""`jax.shard_map` (keyword-only, also a decorator factory), the legacy positional
`jax.experimental.shard_map.shard_map(f, mesh, in_specs, out_specs)`, and their `partial` forms.

Inside the function every argument is a per-device block: `NamedSharding(mesh, spec).shard_shape`
of its global shape, which must divide evenly (reference §5). What the function returns is a block
too; its global shape is the block times the sizes of the mesh axes in `out_specs`. The mesh is
`mesh=`, else the `jax.set_mesh` context where the function is called (JAX reads it then).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import replace

from shardls.analysis.evaluation.fixed_rank import joined_array
from shardls.analysis.evaluator import Evaluator
from shardls.analysis.facts import MeshFact, Related, SiteKind, Span
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import python_scalar_array
from shardls.analysis.recognizers.body_result import body_result
from shardls.analysis.recognizers.nnx_lifted import nnx_result, nnx_site
from shardls.analysis.recognizers.sharding_pairs import Argument, Pair, pair_arguments
from shardls.analysis.recognizers.wrapped import (
    Application,
    CallSite,
    application_of,
    at_call,
    binds,
    call_sites,
    caller_walker,
    output_pairs,
    pair_span,
    positional_arguments,
    quiet_mesh,
)
from shardls.analysis.sharded.manual import (
    SHARD_MAP_APIS,
    axis_names,
    check_vma,
    inside_mesh,
    typed_block,
    typed_output,
)
from shardls.analysis.sharded.propagate import typed
from shardls.analysis.site_facts import shape_reason
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import (
    ArrayV,
    Choice,
    Const,
    DictV,
    MeshV,
    Origin,
    Seq,
    SpecV,
    Unknown,
    Value,
    as_int,
    options,
)
from shardls.analysis.walker import Context, MeshContext, Visit
from shardls.core import (
    FLOAT32,
    Mesh,
    Problem,
    Severity,
    UsageContext,
    compute_layout,
    resolve_mesh,
)
from shardls.core.spec import entry_axes
from shardls.core.typing import TypeRejected

_USAGE = UsageContext.SHARD_MAP


@recognizes(*SHARD_MAP_APIS)
def shard_map(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    app = application_of(builder.evaluator, visit, call.qualname, call.args, call.kwargs)
    if app is None:
        return
    sites = call_sites(caller_walker(builder, visit), app, 0)
    for site in sites:
        _called(builder, app, site)
    if not sites:
        _uncalled(builder, app)


@binds(*SHARD_MAP_APIS)
def _bind(evaluator: Evaluator, app: Application, site: CallSite) -> tuple[dict[str, Value], Context]:
    """Inside the function each parameter is its argument's per-device block, and the context
    mesh is the shard_map's with the manual axes typed Manual (as `get_abstract_mesh()` shows
    there, so `with_sharding_constraint` may only name the other, Auto, axes)."""
    context = site.visit.context
    meshes = _meshes(evaluator, app, context)
    if meshes is None:
        return _blocks(
            app, _input_pairs(app, nnx_site(evaluator, app, site), _x64(evaluator)), None, None, site
        )[0], context
    mesh, inside = meshes
    line = app.visit.frame.line_of(app.visit.call) + 1
    body_mesh = MeshContext(
        inside, f"inside the shard_map of {app.name} at line {line}", app.visit.frame.span(app.visit.call)
    )
    pairs = _input_pairs(app, nnx_site(evaluator, app, site), _x64(evaluator))
    blocks = _blocks(app, pairs, mesh.mesh, (mesh, inside), site)[0]
    return blocks, replace(context, meshes=(*context.meshes, body_mesh))


# -- at a call: blocks, output, mesh -------------------------------------------------------------


def _called(builder: SiteBuilder, app: Application, site: CallSite) -> None:
    visit = site.visit
    call_span = visit.frame.span(visit.call)
    mesh = _site_mesh(builder, app, site, call_span)
    resolved = mesh.mesh if mesh is not None and mesh.mesh.is_resolved else None
    pairs = _input_pairs(app, nnx_site(builder.evaluator, app, site), _x64(builder.evaluator))
    for pair in pairs:
        span = pair_span(visit.frame, pair, call_span)
        _place(builder, app, visit, SiteKind.SHARD_MAP_IN, _at_call(pair), pair.value, span, mesh)
    meshes = _meshes(builder.evaluator, app, visit.context) if resolved is not None else None
    blocks, rejected = _blocks(app, pairs, resolved, meshes, site)
    for pair, refused in rejected:
        _reject(builder, pair_span(visit.frame, pair, call_span), refused, pair.value)
    result = nnx_result(
        builder.evaluator, app, _body_result(builder.evaluator, app, blocks, meshes), visit.frame
    )
    outcomes = list(options(result))[:_OUTCOMES] if isinstance(result, Choice) else [result]
    out_specs, out_node = app.get("out_specs"), app.node("out_specs")
    for pair in (p for r in outcomes for p in output_pairs(out_specs, out_node, r, site, f"{app.name}(...)")):
        global_ = _global_output(resolved, pair)
        # One of several values the body may return is no fact to reject the call on.
        if meshes is not None and isinstance(pair.spec, SpecV) and len(outcomes) == 1:
            global_, rejection = typed_output(
                pair.value, global_, pair.spec.spec, meshes[0], _check_vma(app), app.name
            )
            if rejection is not None:
                _reject(builder, call_span, rejection, pair.value)
        _place(builder, app, visit, SiteKind.SHARD_MAP_OUT, _at_call(pair), global_, call_span, mesh)


_OUTCOMES = 4
"""Layouts an output site gets at most from a body that returns one of several values (an `if`
in the body undecided: JAX traces the branch the call takes). Each is a layout the call may have,
not a type JAX checks: none is typed or rejected."""


def _body_result(
    evaluator: Evaluator, app: Application, blocks: dict[str, Value], meshes: tuple[MeshV, MeshV] | None
) -> Value:
    """What the body returns, evaluated with the body's mesh as the context mesh (what an array
    it creates is placed on)."""
    outside = evaluator.state
    if meshes is not None:
        evaluator.context_mesh = meshes[1]
    try:
        return body_result(evaluator, app, blocks)
    finally:
        evaluator.state = outside


def _reject(builder: SiteBuilder, span: Span, rejection: TypeRejected, value: Value | None) -> None:
    """A trace-time rejection of the call: an error only when the types behind it rest on no
    assumption."""
    found = typed(value)
    builder.report(span, rejection.problem, assumed=found.assumptions if found is not None else ())


def _at_call(pair: Pair) -> Pair:
    """JAX checks the specs when the function is called: their problems are reported there."""
    return replace(pair, spec=at_call(pair.spec)) if isinstance(pair.spec, SpecV) else pair


def _input_pairs(app: Application, site: CallSite, x64: bool) -> list[Pair]:
    """in_specs matched to the arguments; with in_specs omitted (allowed on Explicit axes) JAX
    takes each argument's own spec. A Python number passed is the 0-d array JAX makes of it
    (`shmap_forward(variables, x, True, rngs)`: the body gets a bool array); arrays of one rank
    from several branches are one array of that rank (sizes where the branches agree)."""
    arguments = [
        Argument(joined_array(python_scalar_array(value, x64)) if value is not None else None, node, label)
        for value, node, label in positional_arguments(app, site)
    ]
    if "in_specs" in app.arguments:
        return pair_arguments(app.get("in_specs"), app.node("in_specs"), arguments)
    return [
        Pair(value.sharding.spec, None, value, node, label)
        for value, node, label in arguments
        if isinstance(value, ArrayV) and value.sharding is not None
    ]


def _x64(evaluator: Evaluator) -> bool:
    """Whether 64-bit dtypes are enabled (a Python number passed becomes a 64-bit array)."""
    library = evaluator.library
    return library.environment.x64 if isinstance(library, Library) else False


def _site_mesh(builder: SiteBuilder, app: Application, site: CallSite, span: Span) -> MeshFact | None:
    """`mesh=` (which must match the context mesh, SH211), else the context mesh at the call;
    with neither JAX fails ("The context mesh cannot be empty"), SH202."""
    context = site.visit.context.mesh
    declared = app.get("mesh")
    if isinstance(declared, MeshV):
        fact = replace(builder.mesh_fact(declared), selection="the mesh argument of shard_map")
        if context is not None and not context.legacy:
            _check_context_mesh(builder, app, fact, builder.mesh_fact(context.mesh), site, span)
        return fact
    if declared is not None:
        fallback = builder.fallback_for(span)
        return (
            replace(fallback, selection=f"mesh= is not known; assumed {fallback.selection}")
            if fallback
            else None
        )
    if context is not None and not context.legacy:
        return replace(builder.mesh_fact(context.mesh), selection=context.how)
    if site.visit.context.unknown_caller:  # a caller shardls cannot see may set the mesh
        return builder.fallback_for(span)
    legacy = " (the deprecated `with mesh:` does not count)" if context is not None else ""
    builder.report(
        span,
        Problem(
            "SH202",
            Severity.ERROR,
            'shard_map has no mesh= and there is no context mesh here (JAX: "The context mesh cannot '
            f'be empty"){legacy}; pass mesh= or call it under `with jax.set_mesh(mesh):`',
        ),
    )
    return builder.fallback_for(span)


def _check_context_mesh(
    builder: SiteBuilder, app: Application, given: MeshFact, current: MeshFact, site: CallSite, span: Span
) -> None:
    """JAX raises at the call when `mesh=` differs from the context mesh there."""
    context = site.visit.context.mesh
    if context is None or _identity(given.mesh) == _identity(current.mesh):
        return
    node = app.node("mesh")
    given_at = app.visit.frame.span(node if node is not None else app.visit.call)
    builder.report(
        span,
        Problem(
            "SH211",
            Severity.ERROR,
            f"shard_map is given the mesh ({given.mesh.describe()}) but is called under {context.how}, "
            f"whose mesh is ({current.mesh.describe()}); JAX requires the two to match",
        ),
        (
            Related(given_at, "the mesh given to shard_map"),
            Related(context.span, "the context mesh is set here"),
        ),
    )


def _identity(mesh: Mesh) -> tuple[object, ...]:
    """What JAX compares: axis names, sizes and types, and the devices."""
    return (mesh.axis_names, mesh.axis_sizes, mesh.axis_types, mesh.device_ids)


# -- without a visible call: the specs alone ---------------------------------------------------------


def _uncalled(builder: SiteBuilder, app: Application) -> None:
    visit = app.visit
    call_span = visit.frame.span(visit.call)
    declared = app.get("mesh")
    mesh = (
        replace(builder.mesh_fact(declared), selection="the mesh argument of shard_map")
        if isinstance(declared, MeshV)
        else quiet_mesh(builder, visit, call_span)
    )
    in_pairs = pair_arguments(app.get("in_specs"), app.node("in_specs"), [])
    out_pairs = output_pairs(app.get("out_specs"), app.node("out_specs"), None, None, f"{app.name}(...)")
    for kind, pairs in ((SiteKind.SHARD_MAP_IN, in_pairs), (SiteKind.SHARD_MAP_OUT, out_pairs)):
        for pair in pairs:
            span = visit.frame.span(pair.spec_node) if pair.spec_node is not None else call_span
            _place(builder, app, visit, kind, pair, None, span, mesh)


# -- shapes ------------------------------------------------------------------------------------------


def _place(
    builder: SiteBuilder,
    app: Application,
    visit: Visit,
    kind: SiteKind,
    pair: Pair,
    array: ArrayV | None,
    span: Span,
    mesh: MeshFact | None,
) -> None:
    """A site for one spec of in_specs/out_specs (an entry that is not a P is left alone)."""
    if not isinstance(pair.spec, SpecV):
        return
    shape = array.shape if array is not None else None
    dtype = array.dtype if array is not None else None
    notes = _compiler_axes(app, mesh) if kind is SiteKind.SHARD_MAP_OUT else ()
    builder.add_layout(
        kind,
        visit,
        span,
        pair.label or None,
        pair.spec,
        shape,
        dtype,
        _USAGE,
        mesh,
        assumptions=notes,
        shape_reason=shape_reason(array),
    )
    # With in_specs omitted JAX takes each argument's type, of which only the manual axes become
    # the block's split: an Explicit axis outside axis_names stays in the body's type, no error.
    if kind is SiteKind.SHARD_MAP_OUT or "in_specs" in app.arguments:
        _check_manual_axes(builder, app, pair.spec, span)


def _compiler_axes(app: Application, mesh: MeshFact | None) -> tuple[str, ...]:
    """In partial manual mode out_specs lay the output out over the manual axes only; the other
    axes keep whatever layout the body gave it (e.g. by with_sharding_constraint)."""
    manual = _manual_axes(app)
    others = [a for a in mesh.mesh.axis_names if manual is not None and a not in manual] if mesh else []
    if not others:
        return ()
    return (f"out_specs lay out only the manual axes; the output may also be split over {', '.join(others)}",)


def _blocks(
    app: Application,
    pairs: list[Pair],
    mesh: Mesh | None,
    meshes: tuple[MeshV, MeshV] | None,
    site: CallSite,
) -> tuple[dict[str, Value], list[tuple[Pair, TypeRejected]]]:
    """The value of each parameter inside the function: its argument's block on `mesh`, typed
    when the argument's type is known (`meshes`: the call's mesh and the body's, when the code
    states them); and the arguments JAX refuses for their in_specs. A module whose variables
    the in_specs split nothing of (`nnx.shard_map` with `P()` for it) is the module itself."""
    blocks: dict[str, Value] = {}
    rejected: list[tuple[Pair, TypeRejected]] = []
    inferred = "in_specs" not in app.arguments
    for pair in pairs:
        value = _block(pair, mesh)
        sized = _int_dims(pair.value) is not None  # a block of known rank only is not typed
        if meshes is not None and sized and isinstance(value, ArrayV) and isinstance(pair.spec, SpecV):
            spec = None if inferred else pair.spec.spec
            value, rejection = typed_block(pair.value, value, spec, meshes[1], _check_vma(app), app.name)
            if rejection is not None:
                rejected.append((pair, rejection))
        blocks[pair.label] = value
    modules = {label: value for value, _, label in positional_arguments(app, site) if _whole(label, pairs)}
    values = {
        name: blocks.get(name)
        or _assembled(name, blocks)
        or modules.get(name)
        or Unknown(f"block of {name} in shard_map")
        for name in app.parameters
    }
    return values, rejected


def _whole(name: str, pairs: list[Pair]) -> bool:
    """Whether the module passed as `name` reaches the body whole: it was laid out variable by
    variable (`m.kernel`, ...), every spec splits nothing and no variable's array carries a
    sharding of its own (whose type inside the body shardls does not model)."""
    variables = [pair for pair in pairs if pair.label.startswith(name + ".")]
    return bool(variables) and all(
        isinstance(pair.spec, SpecV)
        and not pair.spec.unknown_entries
        and pair.spec.spec.plain
        and not any(pair.spec.spec.entry_names)
        and pair.value is not None
        and pair.value.sharding is None
        for pair in variables
    )


_PATH_STEP = re.compile(r"\[(\d+|'[^']*')\]")
"""One step of a leaf's path as `pair_tree` writes it: `[0]` in a tuple, `['kernel']` in a dict."""


def _assembled(name: str, blocks: dict[str, Value]) -> Value | None:
    """A parameter that receives a pytree (`fn(weights)` with `in_specs=((P(...), (P(...), ...)),)`):
    the tree of its leaves' blocks, rebuilt from their paths (`weights[1][0]`); None when no leaf
    is below it. A position no leaf reaches is unknown."""
    tree: _Tree = {}
    for label, block in blocks.items():
        if not label.startswith(name + "["):
            continue
        steps = _PATH_STEP.findall(label[len(name) :])
        if "".join(f"[{step}]" for step in steps) != label[len(name) :]:
            return None  # a path this reading does not know (a key that is not a string)
        node = tree
        for step in steps[:-1]:
            child = node.setdefault(_key(step), {})
            if not isinstance(child, dict):
                return None
            node = child
        node[_key(steps[-1])] = block
    return _tree_value(tree) if tree else None


def _key(step: str) -> int | str:
    """A path step's key (`_PATH_STEP`: digits or a quoted string), read without
    `ast.literal_eval` unless the string holds an escape: each call of it parses its text and
    makes four functions that refer to each other, a cycle for the garbage collector (4,354 in a
    check of maxtext)."""
    if not step.startswith("'"):
        return int(step)
    if "\\" not in step:
        return step[1:-1]
    key = ast.literal_eval(step)
    assert isinstance(key, str)
    return key


_Tree = dict[int | str, "_Tree | Value"]


def _tree_value(node: _Tree | Value) -> Value:
    if not isinstance(node, dict):
        return node
    indices = [key for key in node if isinstance(key, int)]
    if len(indices) == len(node):
        length = max(indices) + 1
        return Seq(
            tuple(_tree_value(node.get(i, Unknown("a block no in_spec reaches"))) for i in range(length))
        )
    return DictV(tuple(Const(key) for key in node), tuple(_tree_value(item) for item in node.values()))


def _check_vma(app: Application) -> bool | None:
    return check_vma(app.get("check_vma") if "check_vma" in app.arguments else app.get("check_rep"))


def _block(pair: Pair, mesh: Mesh | None) -> Value:
    array = pair.value
    if isinstance(pair.spec, Const) and pair.spec.value is None:
        return array or Unknown("an argument of unknown shape")  # `in_specs=None`: the whole array
    dims = _int_dims(array)
    if array is not None and isinstance(pair.spec, SpecV) and (mesh is None or dims is None):
        return _ranked_block(pair, array)
    if mesh is None or not isinstance(pair.spec, SpecV) or array is None or dims is None:
        return Unknown(f"block of {pair.label} in shard_map")
    layout = compute_layout(mesh, pair.spec.spec, dims, array.dtype or FLOAT32, _USAGE)
    if layout.shard_shape is None:
        return Unknown(f"{pair.label} does not split into blocks (see the shard_map diagnostics)")
    origin = Origin(f"block of {pair.label} in shard_map by {pair.spec.spec.display()}")
    return ArrayV(tuple(Const(n, origin=origin) for n in layout.shard_shape), array.dtype)


def _ranked_block(pair: Pair, array: ArrayV) -> Value:
    """The block of an argument whose rank is known but not every size, or on a mesh not known:
    the argument's rank (shard_map keeps it), a dimension no axis splits the argument's, the
    others unknown (jax-llm-examples' MoE `_expert_fn(x_, ...)` on `cfg.mesh`). Each keeps the
    origin of the argument's size, so a rank that rests on an assumption still does."""
    assert isinstance(pair.spec, SpecV)
    spec = pair.spec.spec
    if array.shape is None or len(spec.entries) > len(array.shape):
        return Unknown(f"block of {pair.label} in shard_map")
    unknown = set(pair.spec.unknown_entries)
    split = [
        index in unknown or any(isinstance(a, str) for a in entry_axes(entry))
        for index, entry in enumerate(spec.padded(len(array.shape)))
    ]
    return ArrayV(
        tuple(
            Unknown(f"size {index} of the block of {pair.label}", origin=size.origin) if cut else size
            for index, (size, cut) in enumerate(zip(array.shape, split, strict=True))
        ),
        array.dtype,
    )


def _global_output(mesh: Mesh | None, pair: Pair) -> ArrayV | None:
    """out_d = block_d × Π sizes(out_specs[d] axes) (reference §5). A block of known rank gives
    the output that rank even when some size or the mesh is not known: a dimension no axis
    splits is the block's, the others are unknown (so is any dimension whose out_specs entry is
    not known)."""
    block = pair.value
    if block is None or block.shape is None or not isinstance(pair.spec, SpecV):
        return None
    spec = pair.spec.spec
    if len(spec.entries) > len(block.shape):
        return None
    dims = _int_dims(block)
    origin = Origin(f"shard_map output block × the mesh axes of {spec.display()}")
    if mesh is not None and dims is not None:
        sizes = mesh.sizes_by_name
        shape = tuple(
            Const(
                n * math.prod(sizes.get(a, 1) for a in entry_axes(entry) if isinstance(a, str)), origin=origin
            )
            for n, entry in zip(dims, spec.padded(len(dims)))
        )
        return ArrayV(shape, block.dtype)
    unknown = set(pair.spec.unknown_entries)
    return ArrayV(
        tuple(
            size
            if index not in unknown and not [a for a in entry_axes(entry) if isinstance(a, str)]
            else _scaled(size, entry, mesh, origin)
            for index, (size, entry) in enumerate(zip(block.shape, spec.padded(len(block.shape))))
        ),
        block.dtype,
    )


def _scaled(size: Value, entry: object, mesh: Mesh | None, origin: Origin) -> Value:
    """A block size times the sizes of the mesh axes of its out_specs entry, when all are known."""
    number = as_int(size)
    axes = [a for a in entry_axes(entry) if isinstance(a, str)]  # type: ignore[arg-type]
    sizes = mesh.sizes_by_name if mesh is not None else {}
    factors = [sizes.get(a) for a in axes]
    if number is None or not axes or any(not isinstance(f, int) for f in factors):
        return Unknown("a block size times the mesh axes its out_specs entry names")
    return Const(number * math.prod(f for f in factors if isinstance(f, int)), origin=origin)


def _int_dims(array: ArrayV | None) -> tuple[int, ...] | None:
    """The array's shape when every dimension is a known integer."""
    dims = [as_int(d) for d in array.shape] if array is not None and array.shape is not None else [None]
    known = tuple(d for d in dims if d is not None)
    return known if len(known) == len(dims) else None


# -- meshes and manual axes --------------------------------------------------------------------------


def _meshes(evaluator: Evaluator, app: Application, context: Context) -> tuple[MeshV, MeshV] | None:
    """The call's mesh (sizes resolved) and the body's (the manual axes Manual), when known and
    well formed (one size and one type per name: JAX rejects any other where the mesh is built,
    SH102/SH108, so no body runs on it)."""
    mesh_value = _mesh_value(app, context)
    if mesh_value is None or isinstance(axis_names(app.get("axis_names")), Unknown):
        return None
    mesh = resolve_mesh(mesh_value.mesh, mesh_value.device_count or _device_count(evaluator))[0]
    if not mesh.well_formed:
        return None
    return replace(mesh_value, mesh=mesh), inside_mesh(mesh_value, mesh, _manual_axes(app))


def _mesh_value(app: Application, context: Context) -> MeshV | None:
    """The mesh JAX uses for a call in `context`, when the analysis knows it."""
    declared = app.get("mesh")
    if isinstance(declared, MeshV):
        return declared
    current = context.mesh
    return current.mesh if current is not None and not current.legacy and declared is None else None


def _device_count(evaluator: Evaluator) -> int | None:
    library = evaluator.library
    return as_int(library.environment.device_count) if isinstance(library, Library) else None


def _manual_axes(app: Application) -> frozenset[str] | None:
    """`axis_names={...}` (partial manual mode); None when every mesh axis is manual, or when
    the names are not known (nothing is then checked against them)."""
    names = axis_names(app.get("axis_names"))
    return None if isinstance(names, Unknown) else names


def _check_manual_axes(builder: SiteBuilder, app: Application, spec: SpecV, span: Span) -> None:
    """In partial manual mode the specs may only name the manual axes."""
    manual = _manual_axes(app)
    if manual is None:
        return
    for index, entry in enumerate(spec.spec.entries):
        for axis in entry_axes(entry):
            if isinstance(axis, str) and axis not in manual:
                entry_span = spec.entry_spans[index] if index < len(spec.entry_spans) else None
                builder.report(
                    entry_span or spec.span or span,
                    Problem(
                        "SH005",
                        Severity.ERROR,
                        f"{axis!r} in {spec.spec.display()} is not a manual axis of this shard_map "
                        f"(axis_names={{{', '.join(repr(a) for a in sorted(manual))}}}); "
                        "its specs may only name manual axes",
                        {"axis": axis, "suggestion": None},
                    ),
                )
