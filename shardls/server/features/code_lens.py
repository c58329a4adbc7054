"""Code lenses: above each `nnx.Module` class and each place a model is created, its size
(`params 6.7 B · 12.5 GiB bf16 · 402.2 MiB / device (fsdp=8,tp=4)`); clicking one runs
`shardls.showModelMemory`, which answers with the model's full table in Markdown and, when the
client can show documents, opens it. The same figures head the hover of the class name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from shardls.analysis.facts import Span
from shardls.server.guard import handler, report_failure
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.memory.model import ModelMemory, Models
    from shardls.server.server import ShardServer

SHOW_MODEL = "shardls.showModelMemory"
"""Arguments: the document URI, the model's 0-based line and its name."""


def register(server: ShardServer) -> None:
    @handler(server, types.TEXT_DOCUMENT_CODE_LENS, [], types.CodeLensOptions(resolve_provider=False))
    async def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        view = await server.view(uri)
        if view is None or "nnx" not in view.unit.text:
            return []
        models = await server_models(server, view)
        lenses = []
        for model in models.models:
            place = view.range(model_span(model))
            if place is not None:
                title = _summary(server, view, model)
                lenses.append(
                    types.CodeLens(
                        place, types.Command(title, SHOW_MODEL, arguments=[uri, model.line, model.name])
                    )
                )
        return lenses

    @server.command(SHOW_MODEL)
    async def show_model(uri: str, line: int, name: str) -> str | None:
        try:
            return await _show(server, uri, line, name)
        except Exception as error:
            report_failure(server, SHOW_MODEL, error)
            return None


async def server_models(server: ShardServer, view: View) -> Models:
    return await server.analyses.models(view.unit, server.settings.for_path(view.unit.path))


def model_span(model: ModelMemory) -> Span:
    return Span(model.line, model.column, model.line, max(model.column, model.end_column))


def model_markdown(server: ShardServer, view: View, model: ModelMemory) -> str:
    """The model's table, totals and notes, with the configured optimizer and HBM."""
    from shardls.memory.report import model_text

    return model_text(model, _options(server, view), markdown=True)


async def class_hover(
    server: ShardServer, view: View, line: int, column: int
) -> tuple[Span, list[str]] | None:
    """The hover of a model class's name under the cursor: its summary and table."""
    text = view.unit.lines[line] if line < len(view.unit.lines) else ""
    if not text.lstrip().startswith("class "):
        return None
    models = await server_models(server, view)
    for model in models.models:
        span = model_span(model)
        if not model.instantiation and span.contains(line, column):
            lines = [
                f"**{_summary(server, view, model)}**",
                "",
                *model_markdown(server, view, model).splitlines(),
            ]
            return span, lines
    return None


def _options(server: ShardServer, view: View) -> Any:
    from shardls.memory.optimizer import OPTIMIZERS
    from shardls.memory.report import ReportOptions

    settings = server.settings.for_path(view.unit.path)
    optimizer = OPTIMIZERS.get(settings.optimizer) if settings.optimizer else None
    return ReportOptions(optimizer, settings.hbm_per_device)


def _summary(server: ShardServer, view: View, model: ModelMemory) -> str:
    from shardls.memory.figures import summary
    from shardls.memory.optimizer import optimizer_state

    options = _options(server, view)
    state = optimizer_state(model, options.optimizer) if options.optimizer is not None else None
    return summary(model, state)


async def _show(server: ShardServer, uri: str, line: int, name: str) -> str | None:
    view = await server.view(uri)
    if view is None:
        return None
    models = await server_models(server, view)
    model = next((m for m in models.models if m.line == line and m.name == name), None)
    if model is None:
        return None
    markdown = model_markdown(server, view, model)
    if server.supports("window", "show_document"):
        from shardls.memory.documents import write_memory_document

        document = write_memory_document(model.name, markdown)
        await server.window_show_document_async(types.ShowDocumentParams(document.as_uri(), take_focus=True))
    return markdown
