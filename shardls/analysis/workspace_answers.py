"""Answers about a module that rest on its text and on the workspace's files, computed once per
snapshot of the disk (one `check` run) instead of once per file that asks.

The helper search (`walking/helper_imports.py`) asks of every imported module which of its
functions place what they are given, following its imports into a third module; every file that
imports the module asked again, resolving the same imports and testing the same texts (0.9 s of
a profiled serial check of maxtext, through 5,500 questions about 650 modules). A kept answer
notes again what computing it read (`WorkspaceReads`: texts, probes), so that a persistent cache
entry of each file that uses it rests on the same facts as if it had been computed there.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar, cast

if TYPE_CHECKING:
    from shardls.analysis.module_info import ModuleInfo
    from shardls.analysis.workspace import Workspace

Answer = TypeVar("Answer")
Params = ParamSpec("Params")


def kept(
    workspace: Workspace, module: ModuleInfo, question: Hashable, compute: Callable[[], Answer]
) -> Answer:
    """`compute()`, the answer to `question` about `module`, which must rest on nothing but the
    module and what `workspace` reads: in a snapshot, computed once until `refresh` (or an
    editor's text) and kept while the module lives; otherwise computed at every ask."""
    if not workspace.snapshot:
        return compute()
    key = (id(module), question)
    entry = workspace.answers.get(key)
    if entry is None or entry[0]() is not module:
        with workspace.apart() as reads:
            answer = compute()
        entry = workspace.answers[key] = (weakref.ref(module), answer, reads)
    if workspace.reads is not None:
        workspace.reads.merge(entry[2])
    return cast(Answer, entry[1])


def per_snapshot(
    function: Callable[Concatenate[Workspace, ModuleInfo, Params], Answer],
) -> Callable[Concatenate[Workspace, ModuleInfo, Params], Answer]:
    """`function(workspace, module, *arguments)`, kept by `kept` per module and arguments
    (hashable, and all it rests on besides the module and the workspace)."""

    def answer(
        workspace: Workspace, module: ModuleInfo, /, *args: Params.args, **kwargs: Params.kwargs
    ) -> Answer:
        question = (function.__qualname__, args, tuple(sorted(kwargs.items())))
        return kept(workspace, module, question, lambda: function(workspace, module, *args, **kwargs))

    answer.__doc__ = function.__doc__
    return answer
