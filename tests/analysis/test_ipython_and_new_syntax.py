"""Valid code is never a syntax error: IPython lines inside blocks, and Python 3.12 syntax.

From real notebooks (flax examples, maxtext demos) and gemma's PEP 695 aliases, where shardls
reported SH209 "invalid syntax" on code that runs.
"""

from __future__ import annotations

import sys

import pytest

from shardls import notebook
from shardls.analysis.analyzer import Analyzer
from shardls.notebook import join_cells


def diagnostics_of(*cells: str) -> list[tuple[tuple[int, int], str, str]]:
    notebook = join_cells(enumerate(cells, start=1))
    analysis = Analyzer().analyze("/virtual/notebook.py", notebook.text)
    return [(notebook.locate(d.span.line), d.code, d.message) for d in analysis.diagnostics]


def test_magics_and_shell_lines_inside_blocks_are_valid() -> None:
    found = diagnostics_of(
        "IN_COLAB = False\nif IN_COLAB:\n    %pip install uv\n    !git clone repo\nelse:\n    %load_ext tensorboard\n",
        "current_dir = %pwd\nfiles, more = !ls\nprint(current_dir)\n",
        "if True:\n  !echo only line of the block\n",
        "import jax\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n",
    )
    assert found == []


def test_a_shell_line_continued_with_a_backslash_is_one_command() -> None:
    """big_vision's PaliGemma notebook: `!git clone ...` ending in a backslash, the URL on the next, indented line."""
    found = diagnostics_of(
        "import os\nif not os.path.exists('big_vision_repo'):\n"
        "  !git clone --quiet --branch=main --depth=1 \\\n"
        "     https://github.com/google-research/big_vision big_vision_repo\n"
        "x = 1\n",
        "files = !ls \\\n   -la\n%time \\\n   f()\n",
    )
    assert found == []
    notebook = join_cells([(1, "if True:\n  !echo a \\\n     b\n  y = 2 \\\n     + 1\n")])
    assert notebook.text.splitlines()[2:] == ["     #", "  y = 2 \\", "     + 1"]


def test_a_line_inside_brackets_or_strings_is_python_whatever_it_starts_with() -> None:
    """orbax's MNIST notebook formats with `'...' % (` on a line of its own inside `print(`:
    read as a magic, it left `)` unmatched (a false SH209)."""
    cell = (
        "def report(epoch, loss):\n  print(\n      'epoch: %d, loss: %.4f'\n      % (\n"
        "          epoch,\n          loss,\n      )\n  )\n"
        'doc = """\n!not a command\n%not a magic\n"""\n'
        "if True:\n  !echo still a command\n"
    )
    assert diagnostics_of(cell) == []
    lines = join_cells([(1, cell)]).text.splitlines()
    assert lines[3] == "      % ("
    assert lines[9:11] == ["!not a command", "%not a magic"]
    assert lines[13] == "  pass#echo still a command"


def test_a_magic_assignment_has_an_unknown_value_not_a_made_up_one() -> None:
    notebook = join_cells([(1, "x = %pwd\n")])
    assert notebook.text == "x = ...#pwd"


GENERIC = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
type Rows[T] = list[T]


class Holder[T]:
    def place[S](self, n: int) -> jax.Array:
        return jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P("model")))


def first[T](items: list[T]) -> jax.Array:
    return jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P("data", "model")))
"""


def test_python_3_12_type_parameters_are_analysed_like_any_code() -> None:
    """jax's own sources now write `def f[T](...)`, `class C[T]:` and `type X = ...` (37 SH209 on
    jax-ml/jax): valid code, so no error, and what is inside is analysed as without them."""
    erased = GENERIC.replace("[T]", "").replace("[S]", "").replace("type Rows = ", "Rows = ")
    for source in (GENERIC, erased):
        analysis = Analyzer().analyze("/virtual/new.py", source)
        assert [(d.span.line, d.code) for d in analysis.diagnostics] == [(10, "SH001")]
        assert sorted((s.span.line, s.shard_shape) for s in analysis.sites if s.shard_shape) == [(14, (8, 2))]


SPREAD_TYPE_PARAMETERS = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def cast_qkv[
    Q: (jax.Array, int), K: (jax.Array, int)
](
    q: Q, k: K
) -> tuple[Q, K]:
    return jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P("model")))
"""


def test_type_parameters_spread_over_lines_are_analysed_like_any_code() -> None:
    """tokamax's `def cast_qkv[` with its parameters on the next lines (an SH209 "valid from
    Python 3.12" that skipped the function): erased too, with the lines and columns of the rest
    kept, so the function's placement is judged where it is written."""
    analysis = Analyzer().analyze("/virtual/new.py", SPREAD_TYPE_PARAMETERS)
    assert [(d.span.line, d.span.column, d.code) for d in analysis.diagnostics] == [(12, 67, "SH001")]


@pytest.mark.parametrize(
    "source",
    [
        'name = "x"\nprint(f"{name + "s"}")\n',
        'def first[\n    T: "Bound",\n](items: list[T]) -> T:\n    return items[0]\n',
    ],
)
def test_python_3_12_syntax_shardls_cannot_parse_says_which_python_it_parses_with(source: str) -> None:
    """Parsed on 3.12 and later; on older Pythons the one SH209 says the code is valid (PEP 701
    f-strings, and type parameters holding a string, where counting brackets is not safe)."""
    analysis = Analyzer().analyze("/virtual/new.py", source)
    if sys.version_info >= (3, 12):
        assert analysis.diagnostics == ()
    else:
        assert [d.code for d in analysis.diagnostics] == ["SH209"]
        assert "valid from Python 3.12" in analysis.diagnostics[0].message


def test_a_real_syntax_error_gets_no_note() -> None:
    analysis = Analyzer().analyze("/virtual/bad.py", "x = (1,\ny = 2\n")
    assert analysis.diagnostics and "3.12" not in analysis.diagnostics[0].message


@pytest.mark.parametrize(
    "source",
    [
        "import jax\n\n\nx = 1\n\n\ns = 'never closed\n" + "pass\n" * 5,
        "import jax\n\n\nx = 1\n\n\nclass Test:\n\n# a comment\ndef f():\n    pass\n",
    ],
)
def test_a_syntax_error_counts_lines_from_the_top_of_the_file(source: str) -> None:
    """Python counts from the statement shardls parsed (big_vision: "detected at line 10" for
    line 39); the message must count as the user does."""
    (diagnostic,) = Analyzer().analyze("/virtual/bad.py", source).diagnostics
    try:
        compile(source, "bad.py", "exec")
    except SyntaxError as error:
        assert f"syntax error: {error.msg};" in diagnostic.message
        assert "line 7" in error.msg
    else:
        raise AssertionError("the source must not compile")


def test_a_cell_indented_as_a_whole_runs_dedented_as_in_ipython() -> None:
    """vmoe's CIFAR100 demo: the evaluation loop cell starts with a space on every line; IPython's
    `leading_indent` strips it, so the cell runs."""
    cells = (
        "import jax\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n",
        " ncorrect = 0\n for batch in range(3):\n  ncorrect += batch\n print(ncorrect)\n",
        "\n    # only comments, indented\n",
        "    # an indented comment first\nx = jax.numpy.zeros((3, 5))\n",
        "    %time y = 1\n    z = jax.device_put(jax.numpy.zeros((8, 3)), jax.NamedSharding(mesh, jax.P('data', 'model')))\n",
    )
    found = diagnostics_of(*cells)
    # Only the real problem of the last cell, placed on its own line of its own cell.
    assert [(where, code) for where, code, _ in found] == [((5, 1), "SH001")]
    notebook = join_cells(enumerate(cells, start=1))
    assert notebook.line_counts == (2, 4, 2, 2, 2)
    assert [notebook.line_of(cell, 0) for cell in range(1, 6)] == [0, 3, 7, 9, 12]
    assert notebook.line_of(2, 4) is None
    assert notebook.text.splitlines()[2].startswith("if True:")
    assert notebook.text.splitlines()[3] == " ncorrect = 0"


def test_a_cell_without_ipython_syntax_is_taken_as_it_is_without_tokenizing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tokenizing a cell (to know which lines continue a statement) was most of the CPU of
    reading a notebook; it can only matter to a line that reads as IPython syntax."""
    cells = ("x = (1 +\n     2)\ns = '''\n%not a magic\n'''\n", "if True:\n    y = x % 2\n")
    before = join_cells(enumerate(cells, start=1))
    monkeypatch.setattr(notebook, "_inside_statements", lambda source: pytest.fail(f"tokenized {source!r}"))
    assert join_cells(enumerate(cells[1:], start=2)).text == cells[1].rstrip("\n")
    with pytest.raises(pytest.fail.Exception):
        join_cells(enumerate(cells, start=1))  # a string's line starting with `%`: tokenized
    monkeypatch.undo()
    assert before.text == "\n".join(cell.rstrip("\n") for cell in cells)
