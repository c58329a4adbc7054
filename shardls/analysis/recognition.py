"""Which calls of a file a recognizer handles, and running it on them: the cheap text tests that
decide what is worth walking and evaluating, and the call of a recognizer once per combination of
undecided argument values (the walk that finds the meshes a file builds is `mesh_pass`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from shardls.analysis.evaluation.device_branches import devices_stated
from shardls.analysis.evaluator import Evaluator
from shardls.analysis.library import CallArgs
from shardls.analysis.sharded.typing_pass import context_mesh, tracing
from shardls.analysis.sites import SiteBuilder, callee_name, recognizer_for, wants
from shardls.analysis.values import guarded_alternatives, options
from shardls.analysis.walker import Visit
from shardls.analysis.walking.text_tests import NamedCalls, SiteTrigger

TRIGGER = SiteTrigger(
    (
        "Mesh",
        "mesh",
        "PartitionSpec",
        "Sharding",
        "device_put",
        "sharding",
        "reshard",
        "shard_map",
        "with_partitioning",
        "nnx.",
        "Param(",
        "Linear",
        "Embed",
        "Conv",
        "Einsum",
        "Norm(",
        "Attention",
        "ShapeDtypeStruct",
        "jit",
        "Dense",
        "partitioning",
    )
)
"""Segments that do not match cannot contain a site (the walker's trigger)."""


def recognized(visits: Iterable[Visit], evaluator: Evaluator) -> list[tuple[Visit, str]]:
    """The calls a recognizer handles, with the canonical name of the function called."""
    from shardls.analysis.recognizers import load

    load()
    found: list[tuple[Visit, str]] = []
    handled: set[ast.Call] = set()  # a call's visit comes before those of the calls in its arguments
    for visit in visits:
        if not _may_be_recognized(visit.call):
            continue
        func = evaluator.evaluate(visit.call.func, visit.frame)
        for option in options(func):
            name = callee_name(option)
            if (
                name is not None
                and recognizer_for(name) is not None
                and wants(name, nested=visit.parent in handled)
            ):
                found.append((visit, name))
                handled.add(visit.call)
                break
    return found


def _may_be_recognized(call: ast.Call) -> bool:
    """Whether the callee is worth evaluating (a cheap test of the syntax): it has a name some
    recognizer handles, it is made by a call (`he_normal()(key, shape, dtype, P(...))`), or the
    call sets `out_sharding=`."""
    name = _final_name(call.func)
    if name is not None and name in _interesting_names():
        return True
    return isinstance(call.func, ast.Call) or any(k.arg == "out_sharding" for k in call.keywords)


_NAMES: set[str] = set()


def _interesting_names() -> set[str]:
    if not _NAMES:
        from shardls.analysis import sites

        sites.recognizer_for("")
        _NAMES.update(name.rsplit(".", 1)[-1] for name in sites._RECOGNIZERS)
    return _NAMES


@functools.lru_cache(maxsize=1)
def calls_pattern() -> NamedCalls:
    """Statements worth walking: they call a name some recognizer handles, call what a call
    returned, or set `out_sharding=` (see `_may_be_recognized`)."""
    return NamedCalls.of(_interesting_names() | {"set_mesh"})


def _final_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def run_recognizer(builder: SiteBuilder, visit: Visit, qualname: str) -> None:
    """Run the recognizer of `qualname` on one call, with the evaluator set to the context the
    call runs in (its mesh, whether it is traced)."""
    recognizer = recognizer_for(qualname)
    if recognizer is None:
        return
    evaluator = builder.evaluator
    mesh = context_mesh(visit.context)
    evaluator.context_mesh = mesh.mesh if mesh is not None else None
    evaluator.tracing = tracing(visit.context)
    evaluator.context = visit.context
    branches = visit.context.branches  # the call is written in branches on the device count
    with devices_stated(evaluator, branches, visit.context.count):
        args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
    names = list(kwargs)
    # A condition the analysis cannot decide gives one layout per outcome; the branches each
    # outcome comes through also bound the shapes its sites expand (`SiteBuilder.guard`).
    for combination, guard in guarded_alternatives(args + [kwargs[name] for name in names]):
        chosen_args = list(combination[: len(args)])
        chosen_kwargs = dict(zip(names, combination[len(args) :], strict=True))
        call = CallArgs(
            evaluator, builder.library, qualname, chosen_args, chosen_kwargs, visit.call, visit.frame
        )
        builder.guard = guard
        try:
            with devices_stated(evaluator, guard | branches, visit.context.count):
                recognizer(builder, visit, call)
        finally:
            builder.guard = frozenset()
