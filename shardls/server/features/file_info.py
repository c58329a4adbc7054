"""`shardls/fileInfo`, a custom request: the meshes and the device count in effect for a document,
for an editor's status bar.

Params: `{"textDocument": {"uri": "file:///…/model.py"}}` (a file, a notebook or one of its cells).
Result, or null when the document is not an open Python document:

    {"meshes": [{"name": "mesh", "axes": [{"name": "data", "size": 2}, {"name": "model", "size": 4}],
                 "devices": 8, "source": "make_mesh at line 5"}],
     "deviceCount": {"count": 8, "source": "device-count from editor settings"}}

Meshes come as `View.meshes` orders them: the unit's own definitions first, then the meshes its
sites use (a mesh imported from another file, the default-mesh setting). `devices` is null while
a mesh has an unresolved size (a `-1` the device count does not divide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shardls.analysis.facts import MeshFact
from shardls.server.guard import handler

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

FILE_INFO = "shardls/fileInfo"


def register(server: ShardServer) -> None:
    @handler(server, FILE_INFO, None)
    async def file_info(params: Any) -> dict[str, object] | None:
        # A custom method: pygls hands over the JSON objects as namedtuples, keys as attributes.
        uri = getattr(getattr(params, "textDocument", None), "uri", None)
        if not isinstance(uri, str):
            raise ValueError(f'{FILE_INFO} expects {{"textDocument": {{"uri": ...}}}}, got {params!r}')
        view = await server.view(uri)
        if view is None:
            return None
        count = view.analysis.device_count
        return {
            "meshes": [_mesh(fact) for fact in view.meshes()],
            "deviceCount": {"count": count.count, "source": count.source},
        }


def _mesh(fact: MeshFact) -> dict[str, object]:
    mesh = fact.mesh
    return {
        "name": fact.name,
        "axes": [{"name": name, "size": size} for name, size in zip(mesh.axis_names, mesh.axis_sizes)],
        "devices": mesh.size if mesh.is_resolved else None,
        "source": fact.source,
    }
