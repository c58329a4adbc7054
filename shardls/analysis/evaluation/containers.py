"""Tuples, lists, sets and dicts: their displays, `*` spreads, indexing and slicing, and
comprehensions, which are unrolled when what they iterate over is known and bounded."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.choices import map_options
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import bind_target, truthiness
from shardls.analysis.evaluation.operators import assuming
from shardls.analysis.sharded.operations import typed_subscript
from shardls.analysis.values import ArrayV, Const, DictV, Seq, SetV, SliceV, Unknown, Value, as_int

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


def _eval_Tuple(evaluator: Evaluator, node: ast.Tuple, frame: Frame) -> Value:
    return _sequence(evaluator, node.elts, frame, is_list=False)


def _eval_List(evaluator: Evaluator, node: ast.List, frame: Frame) -> Value:
    return _sequence(evaluator, node.elts, frame, is_list=True)


def _eval_Set(evaluator: Evaluator, node: ast.Set, frame: Frame) -> Value:
    items = _sequence(evaluator, node.elts, frame, is_list=False)
    return SetV(items.items) if isinstance(items, Seq) else items


def _sequence(evaluator: Evaluator, elements: list[ast.expr], frame: Frame, is_list: bool) -> Value:
    items: list[Value] = []
    for element in elements:
        if isinstance(element, ast.Starred):
            spread = evaluator.iterate(evaluator.eval(element.value, frame), frame)
            if not isinstance(spread, Seq):
                return Unknown("starred value of unknown length")
            items.extend(spread.items)
        else:
            items.append(evaluator.eval(element, frame))
        if len(items) > evaluator.limits.collection:
            return Unknown("collection too large")
    return Seq(tuple(items), is_list)


def _eval_Dict(evaluator: Evaluator, node: ast.Dict, frame: Frame) -> Value:
    keys: list[Value] = []
    values: list[Value] = []
    for key, value in zip(node.keys, node.values):
        if key is None:
            spread = evaluator.eval(value, frame)
            if not isinstance(spread, DictV):
                return Unknown("** of unknown mapping")
            keys.extend(spread.keys)
            values.extend(spread.values)
        else:
            keys.append(evaluator.eval(key, frame))
            values.append(evaluator.eval(value, frame))
    return DictV(tuple(keys), tuple(values))


def _eval_Starred(evaluator: Evaluator, node: ast.Starred, frame: Frame) -> Value:
    return evaluator.eval(node.value, frame)


def _eval_Subscript(evaluator: Evaluator, node: ast.Subscript, frame: Frame) -> Value:
    base = evaluator.eval(node.value, frame)
    if isinstance(node.slice, ast.Slice):
        bounds = [
            None if part is None else as_int(evaluator.eval(part, frame))
            for part in (node.slice.lower, node.slice.upper, node.slice.step)
        ]
        part = node.slice
        given = (part.lower, part.upper, part.step)
        known = all(b is not None or p is None for b, p in zip(bounds, given))
        window: slice | Value = slice(*bounds) if known else Unknown("slice bounds unknown")
        return map_options(
            evaluator,
            base,
            lambda b: typed_subscript(
                evaluator, b, window, node, frame, _slice(evaluator, b, part, bounds, frame)
            ),
        )
    index = evaluator.eval(node.slice, frame)
    return map_options(
        evaluator,
        base,
        lambda b: typed_subscript(
            evaluator, b, index, node, frame, evaluator.subscript(b, index, node, frame)
        ),
    )


def _slice(
    evaluator: Evaluator, base: Value, part: ast.Slice, bounds: list[int | None], frame: Frame
) -> Value:
    given = (part.lower, part.upper, part.step)
    if any(b is None and p is not None for b, p in zip(bounds, given)):
        if not isinstance(base, ArrayV) or part.step is not None:
            return Unknown("slice bounds unknown")
        # An array keeps the axis, of a size not known (`tokens[1 : cache.n]`).
        unknown = [
            b if b is not None or p is None else Unknown("a slice bound not known here")
            for b, p in zip(bounds, given)
        ]
        return evaluator.library.subscript(evaluator, base, slice(*unknown), frame) or Unknown(
            "slice bounds unknown"
        )
    if bounds[2] == 0:
        return Unknown("slice step zero")
    window = slice(*bounds)
    if isinstance(base, Seq):
        return Seq(base.items[window], base.is_list)
    if isinstance(base, Const) and isinstance(base.value, str | bytes):
        return assuming(Const(base.value[window], origin=base.origin), base)
    return evaluator.library.subscript(evaluator, base, window, frame) or Unknown("slice of unknown value")


def subscript(evaluator: Evaluator, base: Value, index: Value, node: ast.AST, frame: Frame) -> Value:
    if isinstance(base, DictV):
        key = index.value if isinstance(index, Const) else None
        found = base.get(key) if isinstance(index, Const) else None
        return found if found is not None else Unknown("key not found")
    position = as_int(index)
    if isinstance(base, Seq) and position is not None:
        if -len(base.items) <= position < len(base.items):
            return base.items[position]
        return Unknown("index out of range")
    if isinstance(base, Const) and isinstance(base.value, str) and position is not None:
        try:
            return assuming(Const(base.value[position], origin=base.origin), base, index)
        except IndexError:
            return Unknown("index out of range")
    library = evaluator.library.subscript(evaluator, base, index, frame)
    if library is not None:
        return library
    return Unknown("subscript of unknown value")


def _eval_Slice(evaluator: Evaluator, node: ast.Slice, frame: Frame) -> Value:
    """A slice inside a tuple index (`x[0:4, ::2]`; a lone slice is read by `_eval_Subscript`)."""
    lower, upper, step = (
        None if part is None else evaluator.eval(part, frame) for part in (node.lower, node.upper, node.step)
    )
    return SliceV(lower, upper, step)


def _eval_ListComp(evaluator: Evaluator, node: ast.ListComp, frame: Frame) -> Value:
    return _comprehension(evaluator, node.elt, node.generators, frame, is_list=True)


def _eval_GeneratorExp(evaluator: Evaluator, node: ast.GeneratorExp, frame: Frame) -> Value:
    return _comprehension(evaluator, node.elt, node.generators, frame, is_list=False)


def _eval_SetComp(evaluator: Evaluator, node: ast.SetComp, frame: Frame) -> Value:
    result = _comprehension(evaluator, node.elt, node.generators, frame, is_list=False)
    return SetV(result.items) if isinstance(result, Seq) else result


def _eval_DictComp(evaluator: Evaluator, node: ast.DictComp, frame: Frame) -> Value:
    """`{k: NamedSharding(mesh, v) for k, v in specs.items()}`: a dict, when it unrolls."""
    result = _comprehension(evaluator, (node.key, node.value), node.generators, frame, is_list=False)
    if not isinstance(result, Seq):
        return result
    pairs = [item.items for item in result.items if isinstance(item, Seq)]
    return DictV(tuple(key for key, _ in pairs), tuple(value for _, value in pairs))


def _comprehension(
    evaluator: Evaluator,
    element: ast.expr | tuple[ast.expr, ast.expr],
    generators: list[ast.comprehension],
    frame: Frame,
    is_list: bool,
) -> Value:
    """Comprehensions of known, bounded length (`range(n)`, literal tuples) are unrolled; a
    dict comprehension's element is its key and value."""
    results: list[Value] = []
    run = _Unrolled(evaluator, element, generators, frame, results)
    if not run.items(0, frame.with_locals(dict(frame.locals))):
        return Unknown("comprehension of unknown or unbounded length")
    return Seq(tuple(results), is_list)


class _Unrolled:
    """One unrolling of a comprehension, its generators nested in order. An object, not a
    closure that calls itself: that closure and its cell were a reference cycle, which kept the
    evaluator it held, with all its memos, alive until the garbage collector freed them (most
    of what it traversed after each file of a check)."""

    def __init__(
        self,
        evaluator: Evaluator,
        element: ast.expr | tuple[ast.expr, ast.expr],
        generators: list[ast.comprehension],
        frame: Frame,
        results: list[Value],
    ) -> None:
        self.evaluator, self.element, self.generators, self.frame = evaluator, element, generators, frame
        self.results = results

    def items(self, index: int, inner: Frame) -> bool:
        """Unroll the generators from `index` on, adding each element to `results`; False when a
        generator's items or condition is not known, or there are too many."""
        evaluator, element, results = self.evaluator, self.element, self.results
        if index == len(self.generators):
            if isinstance(element, tuple):
                results.append(Seq(tuple(evaluator.eval(part, inner) for part in element)))
            else:
                results.append(evaluator.eval(element, inner))
            return len(results) <= evaluator.limits.collection
        generator = self.generators[index]
        iterable = evaluator.iterate(evaluator.eval(generator.iter, inner), inner)
        if not isinstance(iterable, Seq):
            return False
        for item in iterable.items:
            scoped = dict(inner.locals)
            if not bind_target(generator.target, item, scoped):
                return False
            item_frame = self.frame.with_locals(scoped)
            conditions = [truthiness(evaluator.eval(c, item_frame)) for c in generator.ifs]
            if any(c is None for c in conditions):
                return False
            if all(conditions) and not self.items(index + 1, item_frame):
                return False
        return True


def iterate(evaluator: Evaluator, value: Value, frame: Frame) -> Value:
    """A value as a sequence (`*spec`, `*shape`, a dict's keys in order), through the library
    for its own types."""
    if isinstance(value, Seq):
        return value
    if isinstance(value, DictV):
        return Seq(value.keys)
    as_sequence = evaluator.library.subscript(evaluator, value, slice(None), frame)
    return as_sequence if as_sequence is not None else value


EXPRESSIONS: ExpressionHandlers = {
    ast.Tuple: _eval_Tuple,
    ast.List: _eval_List,
    ast.Set: _eval_Set,
    ast.Dict: _eval_Dict,
    ast.Starred: _eval_Starred,
    ast.Subscript: _eval_Subscript,
    ast.Slice: _eval_Slice,
    ast.ListComp: _eval_ListComp,
    ast.GeneratorExp: _eval_GeneratorExp,
    ast.SetComp: _eval_SetComp,
    ast.DictComp: _eval_DictComp,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
