"""`jax.vmap`: its body runs with each mapped argument's element (the mapped dimension removed;
a keyword argument is mapped over axis 0), so that the statements of the body get their sharded
types (sharded/vmapped.py)."""

from __future__ import annotations

from shardls.analysis.evaluator import Evaluator
from shardls.analysis.recognizers.wrapped import Application, CallSite, binds
from shardls.analysis.sharded.vmapped import VMAP, body_arguments
from shardls.analysis.values import Unknown, Value
from shardls.analysis.walker import Context


@binds(VMAP)
def _bind(evaluator: Evaluator, app: Application, site: CallSite) -> tuple[dict[str, Value], Context]:
    keywords = list(site.kwargs)
    values = body_arguments(
        site.args, app.get("in_axes"), app.get("spmd_axis_name"), [site.kwargs[k] for k in keywords]
    )
    passed = dict(zip([*app.parameters[: len(site.args)], *keywords], values, strict=False))
    bound = {name: passed.get(name, Unknown(f"{name} in vmap")) for name in app.parameters}
    return bound, site.visit.context
