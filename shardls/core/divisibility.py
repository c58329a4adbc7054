"""Dimensions the mesh axes do not split evenly: the error JAX raises (SH001, with the nearest
sizes that divide and the axes that would), or, where the constraint is compiled, the padding XLA
adds instead (SH007). Quick fixes offer `dividing_axis_choices` too.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Collection

from shardls.core.context import UsageContext
from shardls.core.mesh import Mesh
from shardls.core.problems import Problem, Severity


def _dims_text(global_shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, global_shape)) + "]"


def _axes_text(mesh: Mesh, axes: tuple[str, ...]) -> str:
    if len(axes) == 1:
        return f"mesh axis {axes[0]!r} of size {mesh.sizes_by_name[axes[0]]}"
    product = "×".join(str(mesh.sizes_by_name[a]) for a in axes)
    return f"mesh axes ({', '.join(repr(a) for a in axes)}) of size {product}"


def indivisible_problem(
    mesh: Mesh,
    global_shape: tuple[int, ...],
    dim: int,
    dim_axes: list[tuple[str, ...]],
    factor: int,
) -> Problem:
    """SH001: JAX rejects the layout; the nearest sizes that divide, and the axes (not used by
    the other dimensions) that would divide this one, for the quick fixes."""
    n = global_shape[dim]
    axes = dim_axes[dim]
    lower, upper = (n // factor) * factor, -(-n // factor) * factor
    nearest = [size for size in (lower, upper) if size > 0]
    other_used = {a for d, other in enumerate(dim_axes) if d != dim for a in other}
    alternatives = dividing_axis_choices(mesh, n, exclude=other_used)
    return Problem(
        "SH001",
        Severity.ERROR,
        f"dimension {dim} of {_dims_text(global_shape)} has size {n}, which {_axes_text(mesh, axes)} "
        f"({factor} ways) does not divide; the nearest sizes that divide are "
        + " and ".join(map(str, nearest)),
        {
            "dim": dim,
            "size": n,
            "factor": factor,
            "axes": list(axes),
            "nearest": nearest,
            "alternatives": [list(a) for a in alternatives],
        },
    )


def accepted_in_abstract(problem: Problem) -> Problem:
    """An SH001 in a `ShapeDtypeStruct`: JAX 0.10 builds the struct without asking its sharding
    for a shard shape (only the rank is checked), so the dimension is not rejected here, only where
    the struct meets a jit, `.lower()` or `device_put`: a warning, even when every fact is known."""
    return dataclasses.replace(
        problem,
        severity=Severity.WARNING,
        message=problem.message
        + "; JAX accepts it in a ShapeDtypeStruct, but a jit, .lower() or device_put given it rejects it",
    )


def padding_problem(
    mesh: Mesh,
    global_shape: tuple[int, ...],
    dim: int,
    axes: tuple[str, ...],
    factor: int,
    context: UsageContext,
) -> Problem:
    """SH007: where the constraint is compiled XLA pads every shard instead of rejecting the
    layout (a warning: it runs, with padding and perhaps a replicated result)."""
    n = global_shape[dim]
    block = -(-n // factor)
    where, result = (
        ("inside jit", "the jit output")
        if context is UsageContext.WSC
        else ("in the compiled constraint (the spec has P.UNCONSTRAINED)", "the result")
    )
    return Problem(
        "SH007",
        Severity.WARNING,
        f"dimension {dim} of {_dims_text(global_shape)} has size {n}, which {_axes_text(mesh, axes)} "
        f"does not divide; {where} XLA pads every shard to {block} ({block * factor - n} padding "
        f"elements in all), and {result} may come back replicated",
        {"dim": dim, "size": n, "factor": factor, "axes": list(axes), "padded_block": block},
    )


def dividing_axis_choices(mesh: Mesh, n: int, exclude: Collection[str] = ()) -> list[tuple[str, ...]]:
    """Mesh axes (single, then ordered pairs) that evenly split a dimension of size n, most ways first.

    Quick fixes offer these; an empty tuple (replicate) always divides and is not listed.
    """
    # Axes with a size only: a malformed mesh (fewer sizes than names) can name more.
    free = [a for a in mesh.sizes_by_name if a not in exclude and mesh.sizes_by_name[a] > 1]
    choices: list[tuple[str, ...]] = [(a,) for a in free]
    choices += list(itertools.combinations(free, 2))
    fitting = [c for c in choices if n % math.prod(mesh.sizes_by_name[a] for a in c) == 0]
    return sorted(fitting, key=lambda c: -math.prod(mesh.sizes_by_name[a] for a in c))
