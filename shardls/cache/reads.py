"""What a cached result depends on: the content hashes of the workspace files its analysis read.

An analysis notes its reads in `Workspace.reads` (`WorkspaceReads`); `dependencies` turns them
into a list of facts that can be checked again later without analysing anything:

    ["text", path, hash]      the file's text had this hash (null: it was absent or unreadable)
    ["file", path, exists]    an import looked for this file, and it existed or not
    ["search", pattern, hash] the workspace was searched for files mentioning `pattern` (one of
                              `workspace.SEARCHES`: the search for its only mesh), and these
                              were found (a hash of their paths)
    ["listing", hash]         the workspace was listed and its files read (the scripts that
                              build a model): a hash of every listed path and its text
    ["outcome", name, facts, hash]
                              the analysis used the result of a computation over the workspace
                              (`workspace.WORKSPACE_MESH`: the search for its only mesh), which
                              read `facts` (facts as above) and gave a result of this hash

`WorkspaceState.holds` checks such a list against the disk now, reading each file at most once
per check run. Both sides use the same `Workspace` reads, so a file is seen the same way. An
outcome holds while its facts do; when one of them no longer does (a file that builds a mesh
was edited), the computation is run again and the outcome holds if its result is unchanged: a
one-line edit in a training script does not invalidate every file that falls back on its mesh.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from shardls.analysis.facts import MeshFact
from shardls.analysis.workspace import SEARCHES, WORKSPACE_MESH, Workspace, WorkspaceReads
from shardls.cache.codec import CodecError, Json, encode

Recompute = Callable[[str], object]
"""The result a computation over the workspace, by name, gives now for the file being looked up
(it may raise: the outcome then does not hold)."""

OUTCOME_TYPES: dict[str, object] = {WORKSPACE_MESH: MeshFact | None}
"""The type of each outcome's result, as the codec encodes it to hash it."""


def text_hash(text: str | None) -> str | None:
    if text is None:
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def paths_hash(paths: Sequence[str]) -> str:
    return hashlib.blake2b("\0".join(paths).encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


class WorkspaceState:
    """The workspace as it is on disk during one check run (memoized per file)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._texts: dict[str, str | None] = {}
        self._files: dict[str, bool] = {}
        self._searches: dict[str, str] = {}
        self._listing: str | None = None

    def know(self, path: str, text: str) -> None:
        """`text` is what `Workspace.text_of(path)` gives (a checked file just read): not read again."""
        self._texts.setdefault(os.path.normpath(os.path.abspath(path)), text_hash(text))

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = text_hash(self.workspace.text_of(path))
        return self._texts[path]

    def is_file(self, path: str) -> bool:
        if path not in self._files:
            self._files[path] = os.path.isfile(path)
        return self._files[path]

    def search(self, pattern: str) -> str | None:
        """What searching the workspace for `pattern` finds now (None: not a search shardls
        makes; a pattern from an entry is never compiled, it could take any time to match)."""
        if pattern not in SEARCHES:
            return None
        if pattern not in self._searches:
            self._searches[pattern] = paths_hash(self.workspace.files_mentioning(SEARCHES[pattern]))
        return self._searches[pattern]

    def listing(self) -> str:
        if self._listing is None:
            digest = hashlib.blake2b(digest_size=20)
            for path in self.workspace.python_files():
                digest.update(
                    f"{path}\0{self.text(os.path.normpath(path))}\0".encode("utf-8", "surrogatepass")
                )
            self._listing = digest.hexdigest()
        return self._listing

    def holds(self, dependencies: Json, recompute: Recompute | None = None) -> bool:
        """Whether every fact of `dependencies` is still true (False for anything malformed);
        `recompute` decides an outcome whose facts no longer hold (without it, it does not)."""
        if not isinstance(dependencies, list):
            return False
        files = self._files
        for fact in dependencies:
            # Most facts are an import's probe of a path (about 125 an entry, mostly the same in
            # every entry of a folder): answered first, from what this run has already asked.
            if isinstance(fact, list) and len(fact) == 3 and fact[0] == "file" and isinstance(fact[1], str):
                exists = files.get(fact[1])
                if (self.is_file(fact[1]) if exists is None else exists) is not fact[2]:
                    return False
                continue
            if isinstance(fact, list) and fact and fact[0] == "outcome":
                if not self._outcome_holds(fact, recompute):
                    return False
                continue
            if not isinstance(fact, list) or not fact:
                return False
            kind = fact[0]
            if kind == "text" and len(fact) == 3 and isinstance(fact[1], str):
                if self.text(fact[1]) != fact[2]:
                    return False
            elif kind == "search" and len(fact) == 3 and isinstance(fact[1], str):
                found = self.search(fact[1])
                if found is None or found != fact[2]:
                    return False
            elif kind == "listing" and len(fact) == 2:
                if self.listing() != fact[1]:
                    return False
            else:
                return False
        return True

    def _outcome_holds(self, fact: list[Json], recompute: Recompute | None) -> bool:
        # The name a string before `in`: a list there is unhashable and raised TypeError.
        if len(fact) != 4 or not isinstance(fact[1], str) or not isinstance(fact[3], str):
            return False
        if fact[1] not in OUTCOME_TYPES:
            return False
        if self.holds(fact[2]):
            return True
        if recompute is None:
            return False
        try:
            result = recompute(fact[1])
            return outcome_hash(fact[1], result) == fact[3]
        except (CodecError, ValueError):
            return False


def outcome_hash(name: str, result: object) -> str:
    """A hash of an outcome's result, encoded as its type (`OUTCOME_TYPES`) says."""
    text = json.dumps(encode(OUTCOME_TYPES[name], result), sort_keys=True)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def dependencies(reads: WorkspaceReads, state: WorkspaceState) -> list[Json]:
    """The facts `reads` rests on, as `WorkspaceState.holds` checks them (sorted, so that equal
    reads give equal entries); raises CodecError for an outcome the codec cannot hold."""
    facts: list[Json] = [["text", path, text_hash(text)] for path, text in sorted(reads.texts.items())]
    facts += [["file", path, exists] for path, exists in sorted(reads.probes.items())]
    facts += [["search", pattern, paths_hash(found)] for pattern, found in sorted(reads.searches.items())]
    if reads.listed:
        facts.append(["listing", state.listing()])
    facts += [
        ["outcome", name, dependencies(outcome.reads, state), outcome_hash(name, outcome.result)]
        for name, outcome in sorted(reads.outcomes.items())
    ]
    return facts


def workspace_for(roots: Sequence[Path]) -> Workspace:
    """A workspace of `roots` that takes the disk as not changing during the run."""
    return Workspace(list(roots), snapshot=True)
