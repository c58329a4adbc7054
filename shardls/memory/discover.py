"""The models of one file: each `nnx.Module` subclass, and each place one is instantiated.

A class is sized with the arguments of a visible instantiation (`Transformer(Config.llama_70b(),
rngs=...)`), else its parameters' defaults, else symbolically; an instantiation is laid out on
the mesh and logical rules in effect where it runs (`with jax.set_mesh(mesh),
nnx.logical_axis_rules(RULES):`), else on the `--mesh`/`default-mesh` setting or the mesh pragma.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import Environment, Library
from shardls.analysis.logical import Rules, read_rules
from shardls.analysis.pragmas import read_pragmas
from shardls.analysis.scopes import ClassInfo, ModuleInfo, Scope
from shardls.analysis.settings import DEFAULT_DEVICE_COUNT, Settings
from shardls.analysis.values import ClassV, Const, Origin, Value, options
from shardls.analysis.walker import Context, Visit, Walker
from shardls.analysis.workspace import Workspace
from shardls.core import FLOAT32, Mesh, resolve_mesh
from shardls.memory.figures import mesh_label
from shardls.memory.layout import Placement, lay_out
from shardls.memory.model import ModelMemory, Models, ParamMemory
from shardls.memory.resolve import ModelResolver, RawParam


@dataclass(frozen=True)
class _Instantiation:
    visit: Visit
    cls: ClassInfo
    nested: bool
    """Inside another model's `__init__` (a submodule, not a model of its own)."""


def file_models(
    workspace: Workspace, path: str, text: str, settings: Settings | None = None, only: str | None = None
) -> Models:
    """Every model class of the file (`only`: just that class) and every model instantiated
    outside another model, each with its parameters and totals."""
    return _FileModels(workspace, path, text, settings or Settings()).models(only)


class _FileModels:
    def __init__(self, workspace: Workspace, path: str, text: str, settings: Settings) -> None:
        self.module: ModuleInfo = workspace.module(path, text)
        self.settings = settings
        pragmas = read_pragmas(self.module.source)
        self.stated_count = pragmas.device_count[0] if pragmas.device_count else settings.device_count
        self.device_count = self.stated_count or DEFAULT_DEVICE_COUNT
        default = settings.dtype or FLOAT32
        environment = Environment(
            Const(self.device_count, origin=Origin("device count")), default, settings.x64
        )
        self.library = Library(environment)
        self.evaluator = Evaluator(workspace, self.library)
        self.resolver = ModelResolver(self.evaluator, self.library)
        self.default_dtype = default
        self.fallback_mesh = pragmas.mesh[0] if pragmas.mesh else settings.default_mesh
        self.classes = self._classes()
        names = "|".join(re.escape(c.name) for c in self.classes)
        pattern = re.compile(rf"\b(?:{names})\s*\(") if names else re.compile(r"(?!)")
        self.walker = Walker(self.evaluator, self.module, pattern, pattern)
        self._instances: dict[int, ModelMemory] = {}

    def models(self, only: str | None) -> Models:
        from shardls.analysis.recognizers import load

        load()
        instantiations = self._instantiations()
        chosen = [c for c in self.classes if only is None or c.name == only]
        found = [self._class_model(cls, instantiations) for cls in chosen]
        if only is None:
            found += [self._instance_model(i) for i in instantiations if not i.nested]
        return Models(self.module.path, tuple(found))

    def _classes(self) -> list[ClassInfo]:
        found = []
        for segment in self.module.source.segments:
            for stmt in segment.body:
                if isinstance(stmt, ast.ClassDef):
                    cls = self.evaluator.class_info(stmt, self.module, segment, self.module.scope)
                    frame = Frame(self.module, self.module.scope, segment, None)
                    if self.resolver.is_module(cls, frame):
                        found.append(cls)
        return found

    def _instantiations(self) -> list[_Instantiation]:
        if not self.classes:
            return []
        nodes = {id(c.node): c for c in self.classes}
        found: list[_Instantiation] = []
        seen: set[int] = set()
        for visit in self.walker.visits():
            if id(visit.call) in seen:
                continue
            func = self.evaluator.evaluate(visit.call.func, visit.frame)
            cls = next(
                (
                    nodes[id(o.cls.node)]
                    for o in options(func)
                    if isinstance(o, ClassV) and id(o.cls.node) in nodes
                ),
                None,
            )
            if cls is None:
                continue
            seen.add(id(visit.call))
            found.append(_Instantiation(visit, cls, _inside_model(visit.frame.scope, nodes)))
        return found

    # -- models ------------------------------------------------------------------------------

    def _class_model(self, cls: ClassInfo, instantiations: list[_Instantiation]) -> ModelMemory:
        """Sized by its first instantiation (one outside other models first), else by defaults."""
        mine = sorted((i for i in instantiations if i.cls is cls), key=lambda i: i.nested)
        if mine:
            model = self._instance_model(mine[0])
            line = mine[0].visit.frame.line_of(mine[0].visit.call)
            sized = (f"sizes from the instantiation at line {line + 1}", *model.assumptions)
            model = replace(model, assumptions=sized, sized_from=line)
        else:
            frame = Frame(cls.module, cls.parent, cls.segment, None)
            raws, resolved = self._resolve(cls, [], {}, frame)
            mesh, rules, notes = self._placement(None)
            params, more = self._laid_out(raws, mesh, rules)
            defaults = "no instantiation in this file: sizes from parameter defaults"
            model = ModelMemory(
                cls.name,
                cls.name,
                self.module.path,
                0,
                params,
                mesh_label(mesh),
                (defaults, *notes, *resolved, *more),
            )
        column = cls.node.col_offset
        return replace(
            model,
            name=cls.name,
            instantiation=False,
            line=_class_line(cls),
            column=column,
            end_column=column + len(f"class {cls.name}"),
        )

    def _instance_model(self, inst: _Instantiation) -> ModelMemory:
        """The model one call creates, laid out in that call's context (computed once per call)."""
        known = self._instances.get(id(inst.visit.call))
        if known is not None:
            return known
        visit = inst.visit
        args, kwargs = self.walker.arguments(visit.call, visit.frame)
        raws, resolved = self._resolve(inst.cls, args, kwargs, visit.frame)
        mesh, rules, notes = self._placement(visit.context)
        params, more = self._laid_out(raws, mesh, rules)
        span = visit.frame.span(visit.call)
        model = self._instances[id(visit.call)] = ModelMemory(
            visit.target or inst.cls.name,
            inst.cls.name,
            self.module.path,
            span.line,
            params,
            mesh_label(mesh),
            (*notes, *resolved, *more),
            instantiation=True,
            column=span.column,
            end_column=span.end_column if span.end_line == span.line else span.column,
        )
        return model

    def _resolve(
        self, cls: ClassInfo, args: list[Value], kwargs: dict[str, Value], frame: Frame
    ) -> tuple[list[RawParam], tuple[str, ...]]:
        """The class's parameters with these arguments, and the notes made on the way."""
        self.resolver.start()
        raws = self.resolver.resolve_class(cls, args, kwargs, frame)
        return raws, tuple(self.resolver.notes)

    def _laid_out(
        self, raws: list[RawParam], mesh: Mesh | None, rules: Rules | None
    ) -> tuple[tuple[ParamMemory, ...], tuple[str, ...]]:
        placement = Placement(mesh, rules, self.default_dtype)
        params: list[ParamMemory] = []
        notes: list[str] = []
        for raw in raws:
            param, more = lay_out(raw, placement)
            params.append(param)
            notes += more
        return tuple(params), tuple(dict.fromkeys(notes))

    def _placement(self, context: Context | None) -> tuple[Mesh | None, Rules | None, tuple[str, ...]]:
        """The mesh and rules where the model is created, else the settings' mesh."""
        notes: list[str] = []
        mesh_context = (
            context.mesh if context is not None and context.mesh and not context.mesh.legacy else None
        )
        written = mesh_context.mesh.mesh if mesh_context is not None else None
        if written is None:
            written = self.fallback_mesh
            global_meshes = self.walker.global_meshes
            if written is None and global_meshes:
                written = global_meshes[-1].mesh.mesh
            if written is not None:
                notes.append(
                    f"laid out on the mesh {written.describe()} (not set where the model is created)"
                )
        mesh = None
        if written is not None:
            mesh, problems = resolve_mesh(written, self.stated_count)
            notes += [f"mesh {written.describe()}: {problem.message}" for problem in problems]
            if not mesh.is_resolved:
                notes.append(
                    f"the mesh {written.describe()} cannot be resolved; parameters counted on one device"
                )
                mesh = None
        if mesh is None:
            notes.append("no mesh: every parameter is counted on one device")
        rules = None
        if context is not None and context.rules:
            chosen = context.rules[-1]
            rules = read_rules(chosen.rules, chosen.how)
        return mesh, rules, tuple(notes)


def _inside_model(scope: Scope | None, models: dict[int, ClassInfo]) -> bool:
    """Whether code in `scope` runs in a model's method (also in a function defined there)."""
    while scope is not None:
        function = scope.function
        if function is not None and function.owner is not None and id(function.owner.node) in models:
            return True
        scope = scope.parent
    return False


def _class_line(cls: ClassInfo) -> int:
    return cls.segment.abs_line(cls.node.lineno)
