"""Whether a segment parsed again after an edit is, for the analysis, the segment it replaces: an
edit that leaves its tree as it was, positions included (a comment typed or changed, trailing
whitespace, a line continuation moved), must not cost the analysis of the segment nor of what
reads its names. The parser then keeps the old tree under the new text (`source_edit`), so the
scope's bindings keep their nodes and every result kept by tree stays valid.

The tree is not all the analysis reads of a segment: some of it searches the text. Prefilters (a
word that must be there for the tree to hold what is looked for: `walker.wanted`'s trigger, the
walker's `mentions`, `set_mesh`, `add_argument`, `expected_raises`, mesh mentions) cannot change
their answer's consequence when the tree is the same, since what they guard is read from the tree.
What reads the text itself is made to see the same here, or checked again by the caller:

- columns are converted from the tree's bytes to characters with the line's text: the lines that
  differ must agree on that (ASCII from where they differ);
- the call index and the module's text searches (`called_names`, `first_arguments`, the
  `nnx.vmap(f` search of `nnx_variables`) see comments too: their matches must be the same;
- `walker.wanted` (the typing pass's word filter) and the statement budget, which grows with the
  text, are checked again when a kept result is carried over (`Analyzer`);
- pragmas and suppressions are read from the new text at every analysis.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Sequence

from shardls.analysis.module_info import called_names
from shardls.analysis.source import Segment

_CALL_TEXT = re.compile(r"(?=\b(\w+)(\s*)\(\s*([A-Za-z_]\w*)?)")
"""At every word: a name followed by `(` and the identifier after it, as the module's text
searches for the first argument of a call read them (`first_arguments`, `nnx_variables`)."""


def same_segment(old: Segment, new: Segment) -> bool:
    """Whether the analysis of `new` (a segment parsed again at the place of `old`) gives what
    `old`'s gave: the same tree at the same positions, the same repairs, and the same answers to
    the searches of the text that do not read the tree. The lines of one may go on after the
    other's end (a blank line or a comment added below the statement: the same tree puts no node
    there)."""
    if old.error != new.error or old.repaired_lines != new.repaired_lines:
        return False
    if not all(_same_columns(a, b) for a, b in zip(old.lines, new.lines) if a != b):
        return False
    if called_names(old.text) != called_names(new.text) or _calls(old.text) != _calls(new.text):
        return False
    return old.body is new.body or same_nodes(old.body, new.body)


def _same_columns(old: str, new: str) -> bool:
    """Whether byte columns of one line give the same character columns in both texts: the line
    is ASCII from where they differ (the tree's nodes sit at the same bytes in both)."""
    common = len(os.path.commonprefix([old, new]))
    return old[common:].isascii() and new[common:].isascii()


@functools.lru_cache(maxsize=64)
def _calls(text: str) -> frozenset[tuple[str, str, str]]:
    return frozenset(_CALL_TEXT.findall(text))


def same_nodes(old: Sequence[ast.AST], new: Sequence[ast.AST]) -> bool:
    """Whether two lists of trees are equal, node kinds, fields and positions included. Iterative
    (a long class is thousands of levels of nodes), and plain values are compared where they are
    met: comparing `ast.dump`s of a 2,900-line class took 30 ms, this 10 ms."""
    if len(old) != len(new):
        return False
    stack: list[tuple[object, object]] = list(zip(old, new))
    push, pop = stack.append, stack.pop
    while stack:
        a, b = pop()
        kind = type(a)
        if kind is not type(b):
            return False
        if kind is list or kind is tuple:
            assert isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
            continue
        if not isinstance(a, ast.AST):
            if a != b:
                return False
            continue
        assert isinstance(b, ast.AST)
        fields, others = a.__dict__, b.__dict__
        if len(fields) != len(others):
            return False
        for name, value in fields.items():
            other = others.get(name, _MISSING)
            if type(value) in _PLAIN:
                if type(other) is not type(value) or value != other:
                    return False
            else:
                push((value, other))
    return True


_MISSING = object()
_PLAIN = frozenset({int, str, type(None), bool, float, complex, bytes, type(...)})
"""Field values compared where they are met (anything else is walked: a node or a list)."""
