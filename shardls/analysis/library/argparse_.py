"""`argparse` defaults: `args.d_model` is the `default=` of `--d-model`, labelled overridable.

Scripts commonly size models from command-line flags; the default is the best static answer,
and the provenance says a flag can change it.
"""

from __future__ import annotations

import ast

from shardls.analysis.evaluator import Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.overridable import overridable
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.values import (
    BoundMethod,
    Const,
    NamespaceV,
    ParserV,
    Seq,
    Unknown,
    Value,
    as_str,
)

_MAX_ARGUMENTS = 500


@calls("argparse.ArgumentParser")
def _parser(call: CallArgs) -> Value | None:
    frame = call.frame
    return ParserV(frame.scope, frame.segment, frame.module)


@methods(ParserV, "parse_args", "parse_known_args")
def _parse_args(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    parser = method.base
    assert isinstance(parser, ParserV)
    fields: dict[str, Value] = {}
    for node in _add_argument_calls(parser)[:_MAX_ARGUMENTS]:
        frame = Frame(
            parser.module, parser.scope, parser.segment, None, call.frame.locals, call.frame.call_depth
        )
        named = _argument(call, node, frame)
        if named is not None:
            fields[named[0]] = named[1]
    namespace = NamespaceV(tuple(fields.items()))
    if method.name == "parse_known_args":
        return Seq((namespace, Seq((), is_list=True)))
    return namespace


@attributes(NamespaceV)
def _namespace_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if isinstance(base, NamespaceV):
        return base.get(attr) or Unknown(f"no argument {attr!r}", symbol=attr)
    return None


def _add_argument_calls(parser: ParserV) -> list[ast.Call]:
    """`add_argument` calls in the scope that built the parser (most scripts have one parser)."""
    function = parser.scope.function
    if function is not None:
        roots: list[ast.AST] = list(function.node.body)
    else:
        roots = [
            stmt for seg in parser.module.source.segments if "add_argument" in seg.text for stmt in seg.body
        ]
    found = []
    for root in roots:
        for node in ast.walk(root):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
            ):
                found.append(node)
    return found


def _argument(call: CallArgs, node: ast.Call, frame: Frame) -> tuple[str, Value] | None:
    evaluator = call.evaluator
    flags = [as_str(evaluator.evaluate(arg, frame)) for arg in node.args]
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    dest_node = keywords.get("dest")
    dest = as_str(evaluator.evaluate(dest_node, frame)) if dest_node is not None else None
    if dest is None:
        longs = [f for f in flags if f and f.startswith("--")]
        chosen = longs[0] if longs else next((f for f in flags if f), None)
        if chosen is None:
            return None
        dest = chosen.lstrip("-").replace("-", "_")
    default_node = keywords.get("default")
    if default_node is None:
        return dest, Unknown(f"command-line argument {dest!r} has no default", symbol=dest)
    value = evaluator.evaluate(default_node, frame)
    type_node = keywords.get("type")
    is_int_flag = isinstance(type_node, ast.Name) and type_node.id == "int"
    if (
        is_int_flag
        and isinstance(value, Const)
        and isinstance(value.value, str)
        and value.value.lstrip("-").isdigit()
    ):
        value = Const(int(value.value))
    flag = next((f for f in flags if f), dest)
    return dest, overridable(
        value,
        f"argparse default of {flag} (overridable)",
        f"the default of {flag} (a run may pass another value)",
        frame.module.path,
        frame.line_of(default_node),
    )
