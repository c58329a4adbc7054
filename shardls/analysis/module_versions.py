"""The modules made for each file of a workspace, by text, with the latest one each next text is
parsed from: an edit parses only the lines around it, and the analysis moves the latest's
results by the edit (`line_shift`)."""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.source import SegmentParser
from shardls.analysis.text_diff import Steps, steps_between

VERSIONS = 2
"""Modules kept per file: an edited file keeps this many (each holds its text, lines, segments and
scope)."""


class ModuleVersions:
    """The parsed modules of a workspace's files, by normalised path and text."""

    def __init__(self, parser: SegmentParser, kept: int) -> None:
        """`kept`: how many modules are kept in all (the least recently made go first)."""
        self.parser = parser
        self.kept = kept
        self._modules: OrderedDict[tuple[str, str], ModuleInfo] = OrderedDict()
        self._latest: dict[str, ModuleInfo] = {}
        """The module last made for each file: the next text of the file is parsed from its
        segments (`SegmentParser.parse`), so that an edit parses only the lines around it."""
        self._versions: dict[str, list[tuple[str, str]]] = {}
        """The keys of each file's modules in `_modules`, oldest first (at most VERSIONS)."""
        self._steps: dict[str, list[ModuleInfo]] = {}
        """The modules of each file's latest change made between the one before and the latest
        (`steps_between`), kept alive for the latest's chain of `previous` modules."""

    def module(self, file: str, path: str, text: str, name: Callable[[], str | None]) -> ModuleInfo:
        """The parsed module for this exact text of `file` (normalised `path`; `name` gives its
        module name when a module is made).

        A text other than the file's latest is parsed from the latest module, so that the
        analysis moves the latest's results by the edit between the two (`line_shift`) as it
        does for an edit typed, also when the cache holds a module of the text (an undo, a
        revert: that module was not made from the latest, no line map led to it, and undoing an
        Enter cost as much as analysing everything below it). A change of several regions of
        lines is parsed one region at a time (`steps_between`), each step a module of its own
        with its line delta. The cached module is taken for a change of one region that keeps
        the number of lines: the segments the two share are the same objects, whose results
        carry over without parsing again."""
        key = (file, text)
        cached = self._modules.get(key)
        previous = self._latest.get(file)
        found = _steps(previous, text) if previous is not cached else None
        steps = [] if found is None else found.texts
        if cached is not None and (
            previous is None or (not steps and len(previous.source.lines) == len(cached.source.lines))
        ):
            self._modules.move_to_end(key)
            self._latest[file] = cached
            self._steps.pop(file, None)
            versions = self._versions[file]
            versions.remove(key)
            versions.append(key)
            return cached
        dotted = name()
        for earlier in self._steps.get(file, ()):
            earlier.release()
        made = self._steps[file] = []
        for step in steps:
            assert previous is not None
            previous = ModuleInfo(
                path, dotted, self.parser.parse(step, previous.source), weakref.ref(previous)
            )
            made.append(previous)
            if previous.source.edit is None:
                break  # parsed whole (a string left open): no line map leads through it
        # The diff `_steps` made of the latest and this text is the parse's own when there was
        # no step between them: it is not made again.
        edit = None if found is None else found.last_edit
        source = self.parser.parse(text, previous.source if previous is not None else None, edit)
        module = ModuleInfo(path, dotted, source, None if previous is None else weakref.ref(previous))
        if cached is not None:
            _release(self._modules.pop(key))  # a revert's text, made again from the latest
        self._modules[key] = module
        self._latest[file] = module
        versions = self._versions.setdefault(file, [])
        if cached is not None:
            versions.remove(key)
        versions.append(key)
        while len(versions) > VERSIONS:
            _release(self._modules.pop(versions.pop(0), None))
        while len(self._modules) > self.kept:
            evicted, dropped = self._modules.popitem(last=False)
            self._versions[evicted[0]].remove(evicted)
            if self._latest.get(evicted[0]) is dropped:
                del self._latest[evicted[0]]
            dropped.release()
        return module

    def forget(self, file: str) -> None:
        """Drop the modules made for `file` and their trees."""
        for version in self._versions.pop(file, []):
            module = self._modules.pop(version, None)
            if module is not None:
                self.parser.forget(module.source)
            _release(module)
        self._latest.pop(file, None)
        for earlier in self._steps.pop(file, ()):
            earlier.release()


def _release(module: ModuleInfo | None) -> None:
    """A module no version keeps any more lets go of what it made of itself (`ModuleInfo.release`),
    so that reference counting frees it."""
    if module is not None:
        module.release()


def _steps(latest: ModuleInfo | None, text: str) -> Steps | None:
    """The texts a change from the file's latest module to `text` is parsed through, one region
    of lines at a time (`steps_between`; None for a text whose line ends the parse changes)."""
    if latest is None or "\r" in text or text.startswith("\ufeff"):
        return None
    return steps_between(latest.source.text, latest.source.lines, text)
