"""The models of one file: each `nnx.Module` subclass, and each place one is instantiated.

A class is sized with the arguments of a visible instantiation (`Transformer(Config.llama_70b(),
rngs=...)`) in its own file, else in another file of the workspace (the training script that
imports the model), else of the call that builds it inside such a model (`Block(cfg)` in
`Transformer.__init__`), else its parameters' defaults, else symbolically; an instantiation is laid out on
the mesh and logical rules in effect where it runs (`with jax.set_mesh(mesh),
nnx.logical_axis_rules(RULES):`), else on the `--mesh`/`default-mesh` setting or the mesh pragma.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.evaluator import Evaluator, Frame, Limits
from shardls.analysis.library import Environment, Library
from shardls.analysis.logical import Rules, read_rules
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.pragmas import read_pragmas
from shardls.analysis.scopes import Scope
from shardls.analysis.settings import DEFAULT_DEVICE_COUNT, Settings
from shardls.analysis.values import ClassV, Const, Origin, Value, options
from shardls.analysis.walker import Context, Visit, Walker
from shardls.analysis.workspace import Workspace
from shardls.core import FLOAT32, Mesh, resolve_mesh
from shardls.memory.figures import mesh_label
from shardls.memory.layout import Placement, lay_out
from shardls.memory.model import ModelMemory, Models, ParamMemory
from shardls.memory.raw_param import RawParam
from shardls.memory.resolve import EXHAUSTED, ModelResolver


@dataclass(frozen=True)
class _Call:
    """A model class's constructor with evaluated arguments, in the context that lays it out: what
    sizes a class that has no instantiation of its own."""

    owner: _FileModels
    """The file whose mesh, rules and settings apply."""
    cls: ClassInfo
    args: list[Value]
    kwargs: dict[str, Value]
    frame: Frame
    context: Context | None
    label: str
    """How the assumptions name it: `Net's instantiation at ../train.py:9`."""
    line: int
    """0-based line of the instantiation in the owner's file."""
    inside: bool = False
    """Made inside another model's `__init__` (recorded while that model resolved)."""


@dataclass(frozen=True)
class _Sized:
    """What one call built: the model, and the first call of each submodule class on the way."""

    call: _Call
    model: ModelMemory
    submodules: dict[int, _Call]

    @property
    def complete(self) -> bool:
        """Every size known: the arguments made it all the way down."""
        return not any(p.is_symbolic for p in self.model.params)


MODELS_PER_BUDGET = 4
"""Each model of a file may take a file's evaluation budget (`Limits.file_budget`), and all of
them together this many: a heavy model does not starve the next one, and a file of many
hostile models still ends in bounded time."""
MAX_CANDIDATES = 8
"""Instantiations in other files resolved per class while looking for one that gives every size."""


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


def factory_rules(
    workspace: Workspace, path: str, text: str, factory: str, settings: Settings | None = None
) -> Rules | None:
    """The logical axis rules in effect where the function `factory` of the file creates a model
    (`with nnx.logical_axis_rules(RULES): return Transformer(...)`), read without running it; None
    when it enters none or they cannot be read. Exact mode needs them around the whole
    `nnx.eval_shape` call, where the factory's own `with` block no longer applies."""
    models = _FileModels(workspace, path, text, settings or Settings())
    for inst in models._instantiations():
        function = inst.visit.frame.scope.function if inst.visit.frame.scope else None
        rules = inst.visit.context.rules if inst.visit.context is not None else ()
        if function is not None and function.qualname == factory and rules:
            found = read_rules(rules[-1].rules, rules[-1].how)
            return found if found is not None and found.readable else None
    return None


class _FileModels:
    """The models of one file; `targets` (default: the file's own model classes) are the classes
    whose instantiations are looked for, so that another file can be searched for this one's."""

    def __init__(
        self,
        workspace: Workspace,
        path: str,
        text: str,
        settings: Settings,
        targets: Sequence[ClassInfo] | None = None,
    ) -> None:
        self.workspace = workspace
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
        self.model_budget = Limits().file_budget(len(text))
        self.evaluator = Evaluator(workspace, self.library, budget=MODELS_PER_BUDGET * self.model_budget)
        self.resolver = ModelResolver(self.evaluator, self.library)
        self.default_dtype = default
        self.fallback_mesh = pragmas.mesh[0] if pragmas.mesh else settings.default_mesh
        self.classes = self._classes()
        self.targets = self.classes if targets is None else list(targets)
        self.imported = targets is None
        """Also instantiations of model classes imported from other files (`train.py`)."""
        pattern = _CLASS_CALL if self.imported else _calls_of(self.targets)
        self.walker = Walker(self.evaluator, self.module, pattern, pattern)
        self._instances: dict[int, _Sized] = {}
        self._called: dict[int, _Sized] = {}

    def models(self, only: str | None) -> Models:
        from shardls.analysis.recognizers import load

        load()
        instantiations = self._instantiations()
        top = [self._instance(i) for i in instantiations if not i.nested]
        chosen = [c for c in self.classes if only is None or c.name == only]
        sized = {id(i.cls.node) for i in instantiations if not i.nested}
        calls = self._instantiated_elsewhere([c for c in chosen if id(c.node) not in sized])
        for instance in top:
            for key, call in instance.submodules.items():
                calls.setdefault(key, call)
        found = [self._class_model(cls, instantiations, calls) for cls in chosen]
        return Models(self.module.path, tuple(found + [i.model for i in top] if only is None else found))

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
        """Calls of the target classes (and of imported models, see `imported`), those outside
        another model's `__init__` first."""
        if not self.targets and not self.imported:
            return []
        nodes = {id(c.node): c for c in self.targets}
        models = {id(c.node): c for c in (*self.classes, *self.targets)}
        found: list[_Instantiation] = []
        seen: set[int] = set()
        for visit in self.walker.visits():
            if id(visit.call) in seen:
                continue
            func = self.evaluator.evaluate(visit.call.func, visit.frame)
            classes = [o.cls for o in options(func) if isinstance(o, ClassV)]
            cls = next((nodes[id(c.node)] for c in classes if id(c.node) in nodes), None)
            if cls is None and self.imported:
                cls = next((c for c in classes if self.resolver.is_module(c, visit.frame)), None)
            if cls is None:
                continue
            seen.add(id(visit.call))
            found.append(_Instantiation(visit, cls, _inside_model(visit.frame.scope, models)))
        return sorted(found, key=lambda i: i.nested)

    def _instantiated_elsewhere(self, classes: list[ClassInfo]) -> dict[int, _Call]:
        """For classes this file never instantiates outside a model: an instantiation in another
        workspace file, and the calls of submodules its model made (keyed by the class node).

        The first one that gives every size wins (a training script often passes a config read
        at run time, while a test builds a small one from literals), else the first one; files
        outside tests are searched first. Files come from the workspace's stat cache; only
        those that write `Name(` are analysed, and at most MAX_CANDIDATES calls per class."""
        best: dict[int, _Sized] = {}
        tried: dict[int, int] = {}

        def settled(cls: ClassInfo) -> bool:
            found = best.get(id(cls.node))
            return found is not None and found.complete

        pattern = _calls_of(classes)
        here = os.path.realpath(self.module.path)
        for other in sorted(self.workspace.python_files(), key=_is_test_file):
            missing = [c for c in classes if not settled(c)]
            if not missing:
                break
            text = self.workspace.text_of(other)
            if text is None or not pattern.search(text) or os.path.realpath(other) == here:
                continue
            scan = _FileModels(self.workspace, other, text, self.settings, missing)
            where = os.path.relpath(other, os.path.dirname(os.path.abspath(self.module.path)))
            for inst in scan._instantiations():
                key = id(inst.cls.node)
                if inst.nested or settled(inst.cls) or tried.get(key, 0) >= MAX_CANDIDATES:
                    continue
                tried[key] = tried.get(key, 0) + 1
                sized = scan._sized(scan._call_of(inst, where))
                if key not in best or sized.complete:
                    best[key] = sized
        found = {key: sized.call for key, sized in best.items()}
        for sized in sorted(best.values(), key=lambda s: not s.complete):
            for key, call in sized.submodules.items():
                found.setdefault(key, call)
        return found

    # -- models ------------------------------------------------------------------------------

    def _class_model(
        self, cls: ClassInfo, instantiations: list[_Instantiation], calls: dict[int, _Call]
    ) -> ModelMemory:
        """Sized by its first instantiation in this file outside other models, else by one in
        another file, else by the call that builds it inside a sized model, else by its first
        instantiation inside a model here, else by defaults."""
        mine = [i for i in instantiations if i.cls is cls]
        call = calls.get(id(cls.node))
        if mine and (not mine[0].nested or call is None):
            model = self._instance(mine[0]).model
            line = mine[0].visit.frame.line_of(mine[0].visit.call)
            sized = (f"sizes from the instantiation at line {line + 1}", *model.assumptions)
            model = replace(model, assumptions=sized, covered=True)
        elif call is not None:
            model = call.owner._sized(call).model
            sized = (f"sizes from {call.label}", *model.assumptions)
            model = replace(model, path=self.module.path, assumptions=sized, covered=call.inside)
        else:
            frame = Frame(cls.module, cls.parent, cls.segment, None)
            configs, assumed = self._default_configs(cls, frame)
            model = self._sized(_Call(self, cls, [], configs, frame, None, "parameter defaults", 0)).model
            defaults = "no instantiation in this file: sizes from parameter defaults"
            model = replace(model, assumptions=(defaults, *assumed, *model.assumptions))
        column = cls.node.col_offset
        return replace(
            model,
            name=cls.name,
            instantiation=False,
            line=_class_line(cls),
            column=column,
            end_column=column + len(f"class {cls.name}"),
        )

    def _default_configs(self, cls: ClassInfo, frame: Frame) -> tuple[dict[str, Value], list[str]]:
        """A required `__init__` parameter annotated with a config class whose fields all have
        defaults (`cfg: Config`) is given `Config()`: the model at its default sizes, said as an
        assumption, rather than every dimension left symbolic."""
        init = self.resolver.init_of(cls, frame)
        if init is None:
            return {}, []
        where = Frame(init.module, init.parent, init.segment, None)
        configs: dict[str, Value] = {}
        assumed: list[str] = []
        for arg in _required(init.node.args):
            kind = self.evaluator.evaluate(arg.annotation, where) if arg.annotation is not None else None
            if isinstance(kind, ClassV) and self._needs_no_arguments(kind.cls, where):
                configs[arg.arg] = self.evaluator.instantiate(kind.cls, [], {}, None, where)
                assumed.append(f"{arg.arg} is {kind.cls.name}() (the config class's defaults)")
        return configs, assumed

    def _needs_no_arguments(self, cls: ClassInfo, frame: Frame) -> bool:
        """A plain class whose `__init__` has defaults for everything, or a dataclass-like class
        (no `__init__` written) whose every field has a default; never a model."""
        if self.resolver.is_module(cls, frame):
            return False
        init = self.resolver.init_of(cls, frame)
        if init is not None:
            return not _required(init.node.args)
        return all(
            stmt.value is not None
            for klass in self.evaluator.mro(cls, frame)
            for stmt in klass.node.body
            if isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id in klass.field_names
        )

    def _call_of(self, inst: _Instantiation, where: str | None = None) -> _Call:
        """An instantiation as a call; `where` names its file when it is not the one reported."""
        visit = inst.visit
        args, kwargs = self.evaluator.call_arguments(visit.call, visit.frame)
        line = visit.frame.line_of(visit.call)
        place = f"{where}:{line + 1}" if where else f"line {line + 1}"
        return _Call(
            self, inst.cls, args, kwargs, visit.frame, visit.context, f"the instantiation at {place}", line
        )

    def _instance(self, inst: _Instantiation) -> _Sized:
        """The model one instantiation creates, laid out in its context (computed once)."""
        known = self._instances.get(id(inst.visit.call))
        if known is not None:
            return known
        visit = inst.visit
        span = visit.frame.span(visit.call)
        sized = self._sized(self._call_of(inst))
        model = replace(
            sized.model,
            name=visit.target or inst.cls.name,
            instantiation=True,
            column=span.column,
            end_column=span.end_column if span.end_line == span.line else span.column,
        )
        self._instances[id(visit.call)] = replace(sized, model=model)
        return self._instances[id(visit.call)]

    def _sized(self, call: _Call) -> _Sized:
        """The model `call` builds, laid out in its context, with the first call of each submodule
        class made on the way (labelled after this model), for classes that have no call of
        their own. Computed once per call."""
        known = self._called.get(id(call))
        if known is not None:
            return known
        self.resolver.start()
        cls_name = call.cls.name
        with self.evaluator.budget(self.model_budget):
            raws = self.resolver.resolve_class(call.cls, call.args, call.kwargs, call.frame)
            if self.evaluator.budget_left == 0:
                self.resolver.note(EXHAUSTED)
        resolved = tuple(self.resolver.notes)
        label = f"{cls_name}'s {call.label.removeprefix('the ')}"
        submodules = {
            key: _Call(self, c.cls, c.args, c.kwargs, c.frame, call.context, label, call.line, inside=True)
            for key, c in self.resolver.submodule_calls.items()
        }
        mesh, rules, notes = self._placement(call.context)
        params, more = self._laid_out(raws, mesh, rules)
        model = ModelMemory(
            cls_name,
            cls_name,
            self.module.path,
            call.line,
            params,
            mesh_label(mesh),
            (*notes, *resolved, *more),
        )
        sized = self._called[id(call)] = _Sized(call, model, submodules)
        return sized

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
            global_meshes = self.walker.meshes.global_meshes
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


def _required(arguments: ast.arguments) -> list[ast.arg]:
    """Parameters a call must pass (after `self`): those without a default."""
    positional = [*arguments.posonlyargs, *arguments.args][1:]
    defaulted = len(arguments.defaults)
    required = positional[: len(positional) - defaulted] if defaulted else positional
    return required + [a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is None]


def _is_test_file(path: str) -> bool:
    """Tests, searched last for instantiations (a script's model is the one users mean)."""
    name = os.path.basename(path)
    parts = set(os.path.normpath(path).split(os.sep)[:-1])
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or bool(parts & {"tests", "test"})
    )


_CLASS_CALL = re.compile(r"\b[A-Z]\w*\s*\(")
"""Text that may construct a class (by convention capitalized): where imported models are built."""


def _calls_of(classes: Sequence[ClassInfo]) -> re.Pattern[str]:
    """Text that may call one of these classes (`Transformer(`); matches nothing for none."""
    names = "|".join(re.escape(c.name) for c in classes)
    return re.compile(rf"\b(?:{names})\s*\(") if names else re.compile(r"(?!)")


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
