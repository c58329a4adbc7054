"""Sites at the calls of placement helpers defined in another module of the workspace.

Within one file the walker visits a helper's body once per call that reaches it (its call
contexts), and the helper's placements are sites where they are written. A helper imported from
another module (`from .utils import put`, then `put(x, mesh, P("data"))`) is never walked by the
importer's analysis, so its call had no site and a hover there answered nothing. Here the body of
such a helper is walked as the call runs it (its parameters bound to the call's arguments, in
the caller's mesh and `jit` context), its placements are recognised as usual, and the sites and
problems they give are placed on the call (`SiteBuilder.via`), saying which helper made them
(`via put() in utils.py:12`). The helper's own sites, in its own file's analysis, are unchanged.
The same is done for a method of a class imported from another module, called on an instance
(`sharder.put(x, spec)`, `self` bound to it), and for a lambda bound to a name, also in the
analysed file (`shard = lambda x, *a: jax.device_put(...)`: the walker visits no lambda's body
per call). A function jitted with shardings in another module gets the in/out layouts of its
call instead (`foreign_jit.py`).

Only what the helper makes of its parameters is placed at the call (`device_put`,
`with_sharding_constraint`, `reshard`, `NamedSharding`, ... of a name computed from them,
`helper_imports.places_parameter`): its other sites do not depend on the caller, and stay the
helper's own. Bounded: a helper's helpers are followed `MAX_HELPER_DEPTH` deep (never the same function twice
on one chain), the walk and every evaluation are charged to the statement's step budget as any
other, and only calls of names the module imports from a placing helper are looked at
(`walking/helper_imports.py`). The caller's result depends on the helper's module as it read it:
evaluating the callee reads it through the import (`Reads.modules`), and resolving the imports
reads its text (`Workspace.reads`), so editing the helper analyses its callers again.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator
from shardls.analysis.foreign_jit import Jitted, jitted_in_another_module
from shardls.analysis.lambda_defs import is_lambda_def
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.recognition import TRIGGER, calls_pattern, recognized, run_recognizer
from shardls.analysis.recognizers.jit import layouts_at
from shardls.analysis.sites import SiteBuilder, Via
from shardls.analysis.traced_decorators import body_traced, jitted_by_decorator, traced_by_decorator
from shardls.analysis.values import FunctionV, options
from shardls.analysis.walker import Context, Visit, Walker
from shardls.analysis.walking.call_syntax import called_name
from shardls.analysis.walking.helper_imports import (
    PLACEMENTS,
    helper_names,
    helpers_of,
    places_parameter,
    rewrites_argument,
    with_helpers,
)
from shardls.analysis.walking.text_tests import NamedCalls, TextTest
from shardls.analysis.workspace import Workspace

MAX_HELPER_DEPTH = 2
"""Helpers of other modules followed from a call: the helper, and the helpers it calls."""


@dataclass
class ForeignCalls:
    """The helper calls of one analysis: which names may call a helper of another module, and
    a walker per module whose helpers are walked (made on first use)."""

    evaluator: Evaluator
    workspace: Workspace
    module: ModuleInfo
    """The analysed module."""
    _names: dict[int, tuple[ModuleInfo, frozenset[str]]] = field(default_factory=dict, repr=False)
    _walkers: dict[int, tuple[ModuleInfo, Walker]] = field(default_factory=dict, repr=False)

    def walker_tests(self) -> tuple[TextTest, TextTest]:
        """The analysed module's walker's segment trigger and call test, which also find the calls
        of the helpers it imports."""
        return with_helpers(calls_pattern(), TRIGGER, self.names(self.module))

    def names(self, module: ModuleInfo) -> frozenset[str]:
        """The names a call in `module` may call a helper by: in the analysed module, the helpers
        it imports (its own are walked in their call contexts by its walker); in a helper's
        module, its own helpers (`put_batch` calling `put`) and those it imports from a third
        module (`helpers_of`)."""
        kept = self._names.get(id(module))
        if kept is None:
            found = (
                helper_names(self.workspace, module) | module.placing_lambdas
                if module is self.module
                else helpers_of(self.workspace, module)
            )
            kept = self._names[id(module)] = (module, found)
        return kept[1]

    def wants(self, visit: Visit) -> bool:
        """Whether the call may call a helper of another module (a cheap test of its name)."""
        name = called_name(visit.call)
        return name is not None and name in self.names(visit.frame.module)

    def place(self, builder: SiteBuilder, visit: Visit, chain: tuple[ast.AST, ...] = ()) -> None:
        """The sites and problems of the helpers of other modules `visit` calls, on the call (on
        the outermost call of the analysed file, for a helper's helper)."""
        evaluator = self.evaluator
        for option in options(evaluator.evaluate(visit.call.func, visit.frame)):
            jitted = jitted_in_another_module(evaluator, option, visit, self.module)
            if jitted is not None:
                self._jitted(builder, visit, jitted)
            if not isinstance(option, FunctionV) or (option.bound is None) != (option.func.owner is None):
                continue  # a function, or a method called on an instance (`sharder.put(x, spec)`)
            info = option.func
            here = info.module.path == self.module.path and not is_lambda_def(info.node)
            if here or info.node in chain:
                continue
            args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
            locals_ = evaluator.bind_arguments(info, args, kwargs, option.bound, visit.frame)
            context = _body_context(info, visit.context)
            walker = self._walker(info.module)
            body = list(
                walker.called_body(info, locals_, context, visit.frame.call_depth + 1, option.closure)
            )
            outer = builder.via
            builder.via = outer or Via(visit.frame.span(visit.call), _note(info), visit.target)
            try:
                placing = [inner for inner in body if places_parameter(inner.call, info.node)]
                for inner, qualname in recognized(placing, evaluator):
                    if qualname.rsplit(".", 1)[-1] in PLACEMENTS:
                        reported = len(builder.diagnostics)
                        run_recognizer(builder, _named(inner, builder.via), qualname)
                        if rewrites_argument(inner.call, info.module):
                            del builder.diagnostics[reported:]  # the site only: see rewrites_argument
                if len(chain) + 1 < MAX_HELPER_DEPTH:
                    for inner in placing:
                        if self.wants(inner):
                            self.place(builder, inner, (*chain, info.node))
            finally:
                builder.via = outer

    def _jitted(self, builder: SiteBuilder, visit: Visit, jitted: Jitted) -> None:
        """The in/out layouts of a call of a function jitted in another module, on the call."""
        outer = builder.via
        where = os.path.basename(jitted.module.path)
        note = f"via {jitted.name}() in {where}:{jitted.line + 1}"
        builder.via = outer or Via(visit.frame.span(visit.call), note, visit.target)
        try:
            layouts_at(builder, jitted.app, visit)
        finally:
            builder.via = outer

    def _walker(self, module: ModuleInfo) -> Walker:
        kept = self._walkers.get(id(module))
        if kept is None:
            # Only the helper's placements and helpers are visited: its other calls (a layer built
            # beside them) are evaluated only as far as a placement's arguments need them.
            calls = NamedCalls.of(PLACEMENTS | self.names(module))
            kept = self._walkers[id(module)] = (module, Walker(self.evaluator, module, TRIGGER, calls))
        return kept[1]


def _body_context(info: FunctionInfo, caller: Context) -> Context:
    """The context a helper's body runs in: its caller's, traced also when the helper is
    decorated with a transform (`@jax.jit`)."""
    inside_jit = caller.inside_jit or jitted_by_decorator(info.node)
    traced = body_traced(traced_by_decorator(info.node), inside_jit, caller.traced)
    return replace(caller, inside_jit=inside_jit, traced=traced, call_site=None)


def _named(visit: Visit, via: Via) -> Visit:
    """A placement the helper returns is named as the caller names the helper's result."""
    if isinstance(visit.statement, ast.Return) and via.target is not None:
        return replace(visit, target=via.target)
    return visit


def _note(info: FunctionInfo) -> str:
    line = info.segment.abs_line(info.node.lineno) + 1
    return f"via {info.qualname}() in {os.path.basename(info.module.path)}:{line}"
