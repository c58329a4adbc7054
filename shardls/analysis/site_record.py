"""What every part of a file's analysis shares: the meshes made so far (one fact per constructor
call, however often it is read) and the sites and reports already recorded (each once).

Kept apart from `sites.SiteBuilder`, which makes sites and reports, because this is the state
the mesh pass reuses a segment's kept outcome against: what a part asked of it and added is
noted (`SharedState`), and the outcome is replayed only while the record answers alike."""

from __future__ import annotations

from dataclasses import dataclass, field

from shardls.analysis.facts import MeshFact

Checkpoint = tuple[dict[object, MeshFact], set[tuple[object, ...]]]


@dataclass
class SharedState:
    """What one part of a file's analysis asked of the builder's state shared with the rest (the
    meshes made and the reports and sites seen so far) and what it added: the mesh pass keeps a
    segment's outcome while the answers it got stay the same (`mesh_pass`)."""

    meshes_asked: dict[object, MeshFact | None] = field(default_factory=dict)
    """Each mesh key looked up, with the first answer (before the part added it)."""
    seen_asked: dict[tuple[object, ...], bool] = field(default_factory=dict)
    meshes_added: list[tuple[object, MeshFact]] = field(default_factory=list)
    seen_added: list[tuple[object, ...]] = field(default_factory=list)


@dataclass
class SiteRecord:
    """The meshes made and the keys seen by one file's analysis, noting into `shared` (when set)
    what is asked and added."""

    meshes: dict[object, MeshFact] = field(default_factory=dict)
    """By where the mesh is built: one constructor call is one mesh, however often it is read."""
    _seen: set[tuple[object, ...]] = field(default_factory=set)
    shared: SharedState | None = None
    """When set, what is asked of and added to the record is noted there."""

    def mesh(self, key: object) -> MeshFact | None:
        """The mesh made under `key`, if any."""
        known = self.meshes.get(key)
        if self.shared is not None:
            self.shared.meshes_asked.setdefault(key, known)
        return known

    def add_mesh(self, key: object, fact: MeshFact) -> None:
        self.meshes[key] = fact
        if self.shared is not None:
            self.shared.meshes_added.append((key, fact))

    def first_time(self, key: tuple[object, ...]) -> bool:
        """Whether `key` (a site's or a report's) is new; it is seen from now on."""
        seen = key in self._seen
        if self.shared is not None:
            self.shared.seen_asked.setdefault(key, seen)
            if not seen:
                self.shared.seen_added.append(key)
        self._seen.add(key)
        return not seen

    def answers_alike(self, shared: SharedState) -> bool:
        """Whether the record answers what a part of the analysis asked of it as it did then. A
        mesh keyed by identity (one with no span) is never asked again."""
        return all(
            self.meshes.get(key) == known
            for key, known in shared.meshes_asked.items()
            if not isinstance(key, int)
        ) and all((key in self._seen) == seen for key, seen in shared.seen_asked.items())

    def take(self, shared: SharedState) -> None:
        """Add what a part of the analysis added to the record, as it did (a mesh keyed by the
        identity of a value of an earlier analysis gets a key of its own)."""
        for key, fact in shared.meshes_added:
            self.meshes[object() if isinstance(key, int) else key] = fact
        self._seen.update(shared.seen_added)

    def checkpoint(self) -> Checkpoint:
        """The record as it is, for `restore`."""
        return dict(self.meshes), set(self._seen)

    def restore(self, state: Checkpoint) -> None:
        """Go back to a `checkpoint`: a part of a pass walked in a way it then has to undo."""
        meshes, seen = state
        self.meshes.clear()
        self.meshes.update(meshes)
        self._seen = set(seen)
