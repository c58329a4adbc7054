"""Command-line flags other than `argparse`: absl's `flags.DEFINE_*` and EasyLM's `mlxu`.

`flags.DEFINE_integer("tp", 4, ...)` makes a flag whose value is its default unless the command
line says otherwise. The code reads it as `FLAGS.tp` (the global registry, wherever the flag is
defined: this module or one it imports) or through the holder `DEFINE_*` returns (`_TP.value`).
Either way the value is the default, marked as an assumption (`library/overridable.py`): a run
may pass another. A flag without a default (`None`, usually marked required) or defined where
shardls cannot see stays unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.overridable import overridable
from shardls.analysis.library.registry import attributes, calls
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.source import Segment
from shardls.analysis.values import Const, DictV, ModuleV, NamespaceV, Ref, Seq, Unknown, Value, as_str

_REGISTRY = "absl.flags.FLAGS"


def _parsed_list(text: str) -> list[str]:
    """absl's `DEFINE_list` reads a string default as comma-separated values."""
    return [part.strip() for part in text.split(",")] if text.strip() else []


Parser = Callable[[str], int | float | str | bool | list[str]]
"""absl's reading of a flag's text."""

_PARSERS: dict[str, Parser] = {
    "DEFINE_integer": int,
    "DEFINE_float": float,
    "DEFINE_string": str,
    "DEFINE_enum": str,
    "DEFINE_bool": lambda text: {"true": True, "false": False}[text.lower()],
    "DEFINE_boolean": lambda text: {"true": True, "false": False}[text.lower()],
    "DEFINE_list": _parsed_list,
}
"""How absl parses a default given as a string, by the function that defines the flag."""

_MULTI: dict[str, Parser] = {
    "DEFINE_multi_integer": int,
    "DEFINE_multi_float": float,
    "DEFINE_multi_string": str,
    "DEFINE_multi_enum": str,
}
"""Flags that take a list: a single default stands for a list of one."""

_DEFINERS = (*_PARSERS, *_MULTI)


@dataclass(frozen=True)
class FlagHolderV(Value):
    """What `flags.DEFINE_*` returns: the flag's name and its default (marked overridable)."""

    name: str
    default: Value


@calls(*(f"absl.flags.{definer}" for definer in _DEFINERS))
def _define(call: CallArgs) -> Value | None:
    name = as_str(call.get(0, "name") or Const(None))
    if name is None:
        return Unknown("a flag of unknown name")
    definer = call.qualname.rsplit(".", 1)[-1]
    default = _parsed(definer, call.get(1, "default"), name)
    node = call.arg_node(1, "default") or call.node
    return FlagHolderV(
        name,
        overridable(
            default,
            f"absl flag default of --{name} (overridable)",
            f"the default of --{name} (a run may pass another value)",
            call.frame.module.path,
            call.frame.line_of(node),
        ),
    )


def _parsed(definer: str, default: Value | None, name: str) -> Value:
    """The default as the flag holds it: a string parsed as absl parses the command line."""
    if default is None or (isinstance(default, Const) and default.value is None):
        return Unknown(f"flag --{name} has no default", symbol=name)
    multi = definer in _MULTI
    parse = _MULTI[definer] if multi else _PARSERS[definer]
    items = default.items if multi and isinstance(default, Seq) else (default,)
    parsed: list[Value] = []
    for item in items:
        if isinstance(item, Const) and isinstance(item.value, str):
            try:
                value = parse(item.value)
            except (ValueError, KeyError):
                return Unknown(f"flag --{name} has an invalid default", symbol=name)
            item = (
                Seq(tuple(Const(v) for v in value), is_list=True) if isinstance(value, list) else Const(value)
            )
        parsed.append(item)
    return Seq(tuple(parsed), is_list=True) if multi else parsed[0]


@attributes(FlagHolderV, Ref)
def _flag_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if isinstance(base, FlagHolderV):
        if attr in ("value", "default"):
            return base.default
        return Const(base.name) if attr == "name" else None
    if isinstance(base, Ref) and base.qualname == _REGISTRY:
        assert isinstance(evaluator, Evaluator) and isinstance(frame, Frame)
        return _registered(evaluator, attr, frame)
    return None


def _registered(evaluator: Evaluator, name: str, frame: Frame) -> Value:
    """`FLAGS.name`: the flag's default where it is defined (this module, the module being
    analysed, or a workspace module this one imports)."""
    for module in _modules_defining(evaluator, frame):
        for node, segment in _definitions(evaluator, module, name):
            top = Frame(module, module.scope, segment, None, {}, frame.call_depth)
            holder = evaluator.eval(node, top)
            if isinstance(holder, FlagHolderV) and holder.name == name:
                return holder.default
    return Unknown(f"flag --{name} is not defined where shardls can see it", symbol=name)


def _modules_defining(evaluator: Evaluator, frame: Frame) -> Iterator[ModuleInfo]:
    seen = {frame.module.path}
    yield frame.module
    analysed = evaluator.analysed
    if analysed is not None and analysed.path not in seen:
        seen.add(analysed.path)
        yield analysed
    scope = frame.module.scope
    for bindings in list(scope.bindings.values()):
        for binding in bindings:
            if binding.kind not in ("import", "importfrom"):
                continue
            imported = evaluator.binding_value(binding, scope, None)
            if isinstance(imported, ModuleV) and imported.module.path not in seen:
                seen.add(imported.module.path)
                yield imported.module


def _definitions(evaluator: Evaluator, module: ModuleInfo, name: str) -> Iterator[tuple[ast.Call, Segment]]:
    """The `DEFINE_*` calls of `module` that define `name` (found through the module's index of
    calls, and noted as read so that an edited default analyses its readers again)."""
    reads = evaluator.reads
    for definer in _DEFINERS:
        numbers = module.call_index.get(definer, ())
        if reads is not None:
            if module is evaluator.analysed:
                reads.callees.add(definer)
            else:
                reads.modules[module.path] = module
        for number in numbers:
            segment = module.source.segments[number]
            for statement in segment.body:
                for node in ast.walk(statement):
                    if _defines(node, definer, name):
                        assert isinstance(node, ast.Call)
                        yield node, segment


def _defines(node: ast.AST, definer: str, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if called != definer:
        return False
    first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
    return isinstance(first, ast.Constant) and first.value == name


@calls("mlxu.define_flags_with_default", "mlxu.flags.define_flags_with_default")
def _mlxu_flags(call: CallArgs) -> Value | None:
    """EasyLM's `FLAGS, FLAGS_DEF = mlxu.define_flags_with_default(mesh_dim='1,-1,1', ...)`: the
    flags as a namespace of their defaults, and the defaults as a dict."""
    fields: list[tuple[str, Value]] = []
    for keyword in call.node.keywords:
        if keyword.arg is None or keyword.arg not in call.kwargs:
            continue
        fields.append(
            (
                keyword.arg,
                overridable(
                    call.kwargs[keyword.arg],
                    f"mlxu flag default of --{keyword.arg} (overridable)",
                    f"the default of --{keyword.arg} (a run may pass another value)",
                    call.frame.module.path,
                    call.frame.line_of(keyword.value),
                ),
            )
        )
    defaults = DictV(tuple(Const(k) for k, _ in fields), tuple(v for _, v in fields))
    return Seq((NamespaceV(tuple(fields)), defaults))
