"""Seeded sequences of the edits a user makes while writing sharded JAX code, for the tests that
compare what an incremental analysis (in process, or a live server) gives after each edit with a
fresh analysis of the same text.

Each edit is a change of a range of the text, as an editor sends it (`Edit`): typing and deleting
characters, Enter (a line split, with the indentation an editor keeps), blank lines, deleted
lines, numbers changed, the mesh definition edited (which every other segment depends on), a
statement added to a method's body, a number or a name changed in a method's line (the
`classy` fixture's methods call each other), a line commented out or suppressed, a comment typed at the
end of a line (or trailing whitespace), a top-level statement
pasted twice, an unclosed docstring or bracket, and undo (back to an earlier text). The
`literal_lines` fixture's literals read like the lines its texts name (an axis "line 19").

`moving_sequence` gives edits that move lines and changes sent as the whole new text (`Whole`),
as an editor's undo, a full-sync client, a formatter or "revert file" sends them: an Enter, a
deleted line or a pasted block undone and redone, two of them in one change, a revert.
"""

from __future__ import annotations

import random
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

DIMS = "ROWS = 64\nCOLS = 12\n"
"""The workspace module the `DEPENDENT` fixture imports (edited by some sequences)."""

DEPENDENT = textwrap.dedent(
    '''\
    """Segments that depend on each other: the mesh, constants, a helper and its callers, a class
    whose methods call each other, a jitted function, a global mesh."""

    import jax
    import jax.numpy as jnp
    from flax import nnx
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from dims import COLS, ROWS

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    WIDTH = 1024
    init = nnx.initializers.lecun_normal()


    def place(rows, cols=WIDTH):
        """A matrix split over both axes.
    Its rows over data."""
        return jax.device_put(jnp.zeros((rows, cols)), NamedSharding(mesh, P("data", "model")))


    class Mlp(nnx.Module):
        def __init__(self, d_model: int, hidden: int, *, rngs: nnx.Rngs):
            self.up = nnx.Linear(
                d_model, hidden, kernel_init=nnx.with_partitioning(init, (None, "model")), rngs=rngs
            )
            self.down = nnx.Linear(
                hidden, d_model, kernel_init=nnx.with_partitioning(init, ("model", None)), rngs=rngs
            )

        def constrain(self, x):
            return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", "model")))

        def __call__(self, x):
            x = self.constrain(self.up(x))
            return self.down(x)


    a = place(ROWS)
    b = place(30, COLS)  # shardls: ignore[SH001]
    model = Mlp(WIDTH, 4 * WIDTH, rngs=nnx.Rngs(0))

    if ROWS > 8:
        c = place(ROWS * 2)
    else:
        c = place(6)


    @jax.jit
    def step(x):
        return jax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P(None, "model")))


    y = step(a)
    jax.set_mesh(mesh)
    z = jax.device_put(jnp.ones((ROWS, 6)), P("data", "model"))
    '''
)


CLASSY = textwrap.dedent(
    '''\
    """A class whose methods call each other and read what its constructor sets, its readers in
    other segments, and calls whose contexts name the lines of their callers."""

    import jax
    import jax.numpy as jnp
    from flax import nnx
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("data", "model"))


    def place(rows, cols=16):
        return jax.device_put(jnp.zeros((rows, cols)), NamedSharding(mesh, P("data", "model")))


    class Block(nnx.Module):
        def __init__(self, width: int, rows: int = 8):
            self.width = width
            self.rows = rows
            self.spec = P("data", None)

        def sharding(self):
            return NamedSharding(mesh, self.spec)

        def shape(self):
            return (self.rows, self.width)

        def make(self):
            return jax.device_put(jnp.zeros(self.shape()), self.sharding())

        def helper(self, n):
            return place(n, self.width)

        def uses_helper(self):
            first = self.helper(6)
            return jax.lax.with_sharding_constraint(first, NamedSharding(mesh, P(None, "model")))

        @staticmethod
        def count():
            return 6

        def counted(self):
            return jax.device_put(jnp.zeros((Block.count(), 8)), NamedSharding(mesh, P("model")))

        def local_only(self):
            w = jnp.ones((12, 8))
            self.last = jax.device_put(w, NamedSharding(mesh, P("model", None)))
            return self.last

        def __call__(self, x):
            y = jax.lax.with_sharding_constraint(x, self.sharding())
            return y + self.make()


    class Wide(Block):
        def shape(self):
            return (self.rows, 2 * self.width)


    block = Block(12)
    out = block(jnp.zeros((8, 12)))
    wide = Wide(6, rows=3).make()
    arr = place(10)
    '''
)


LITERAL_LINES = textwrap.dedent(
    '''\
    """Literals that read like the lines texts name: an axis named after line 19, shown in the
    texts of every array laid out over it (which name line 19 too), and words beginning with
    "line" that cannot be shown as a line."""

    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    AXIS = "line 19"
    mesh = jax.make_mesh((2, 4), (AXIS, "model"))
    KEYS = ("linear1", "line: rows")


    def place(rows, cols=16):
        return jax.device_put(jnp.zeros((rows, cols)), NamedSharding(mesh, P(AXIS, "model")))


    a = place(8)
    b = place(6)
    c = jax.device_put(jnp.zeros((12, 6)), NamedSharding(mesh, P("model", AXIS)))
    named = {KEYS[0]: place(4)}
    rows = jax.make_mesh((8,), ("rows",))
    d = jax.device_put(jnp.zeros((16, 4)), NamedSharding(rows, P("rows")))
    '''
)


@dataclass(frozen=True)
class Fixture:
    name: str
    text: str
    files: tuple[tuple[str, str], ...] = ()
    """Other files of the workspace, by name."""


def fixtures() -> list[Fixture]:
    """The texts sequences start from: hand-written dependencies, a generated model, the examples."""
    found = [
        Fixture("dependent", DEPENDENT, (("dims.py", DIMS),)),
        Fixture("generated", model_source(90)),
        Fixture("classy", CLASSY),
        Fixture("literal_lines", LITERAL_LINES),
    ]
    found += [Fixture(path.stem, path.read_text()) for path in sorted(EXAMPLES.glob("*.py"))]
    return found


@dataclass(frozen=True)
class Edit:
    """A change of the text: the range (0-based lines, columns in characters) and its new text."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        begin = _offset(lines, *self.start)
        return text[:begin] + self.text + text[_offset(lines, *self.end) :]


@dataclass(frozen=True)
class FileEdit:
    """Another file of the workspace gets a new text (as the editor's buffer of it would)."""

    name: str
    text: str


@dataclass(frozen=True)
class Whole:
    """A change sent as the whole new text, with no range: an undo in several editors, a
    full-sync client, a formatter, "revert file"."""

    text: str

    def apply(self, text: str) -> str:
        return self.text


def _offset(lines: list[str], line: int, column: int) -> int:
    return sum(len(text) + 1 for text in lines[:line]) + column


def edit_between(old: str, new: str) -> Edit:
    """The smallest one-range edit that turns `old` into `new` (what an editor sends for it)."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    return Edit(_position(old, start), _position(old, len(old) - end), new[start : len(new) - end])


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_TYPED = ["x", "1", " ", "(", ")", ",", "_", '"', ":", "#", "P(", "self.", "mesh", "[", "0", "\\"]
_STATEMENTS = [
    "x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('data', None)))",
    "w = jax.device_put(jnp.zeros((127, 8)), NamedSharding(mesh, P('model')))",
    "y = self.up(x)",
    "mesh = jax.make_mesh((4, 2), ('data', 'model'))",
    "return x",
    "pass",
    "q = place(ROWS + 1)",
    "k = jnp.zeros((16, 8)) @ jnp.zeros((8, 4))",
]


_NAME_OR_NUMBER = re.compile(r"(?<![\w.])(?:\d+|[a-z_]\w*)(?![\w])")
_REPLACEMENTS = {
    True: ["1", "3", "6", "8", "12", "127"],
    False: ["x", "self", "rows", "width", "place", "make", "helper", "sharding", "shape", "spec", "mesh"],
}
"""What `Editor._method_line` puts in place of a number (True) or a name: names the fixtures'
methods and attributes use, so that one method comes to read another's or stops."""


class Editor:
    """A seeded user editing one text."""

    def __init__(self, text: str, rng: random.Random, *, end_comments: bool = True) -> None:
        """`end_comments`: also type comments at line ends (`_trailing_comment`)."""
        self.text = text
        self.rng = rng
        self.history = [text]
        self.end_comments = end_comments

    def step(self) -> Edit:
        """One edit of the current text (applied to it)."""
        return self._step(self._kinds())

    def move(self) -> Edit:
        """One edit that adds or removes lines (applied to the current text): an Enter, a blank
        line, deleted lines, a pasted statement, a statement added to a method."""
        moving = (self._enter, self._blank_line, self._delete_lines, self._paste_segment, self._method_body)
        return self._step([kind for kind in self._kinds() if kind[1] in moving])

    def _kinds(self) -> list[tuple[float, Callable[[list[str]], list[str] | None]]]:
        """The edits, each with its weight."""
        return [
            (3, self._type),
            (1.5, self._backspace),
            (2, self._enter),
            (1, self._blank_line),
            (1.2, self._delete_lines),
            (2, self._number),
            (1.5, self._mesh),
            (1.5, self._method_body),
            (1.5, self._method_line),
            (1, self._comment),
            (1 if self.end_comments else 0, self._trailing_comment),
            (0.5, self._suppress),
            (0.5, self._paste_segment),
            (0.5, self._open_string_or_bracket),
            (0.5, self._indent),
            (1, self._undo),
        ]

    def _step(self, kinds: list[tuple[float, Callable[[list[str]], list[str] | None]]]) -> Edit:
        lines = self.text.split("\n")
        while True:
            (make,) = self.rng.choices([make for _, make in kinds], [weight for weight, _ in kinds])
            changed = make(list(lines))
            if changed is not None and "\n".join(changed) != self.text:
                break
        new = "\n".join(changed)
        edit = edit_between(self.text, new)
        self.text = new
        self.history.append(new)
        return edit

    def _line(self, lines: list[str], pattern: str = "") -> int | None:
        found = [index for index, line in enumerate(lines) if re.search(pattern, line)] if pattern else []
        if pattern:
            return self.rng.choice(found) if found else None
        return self.rng.randrange(len(lines))

    def _type(self, lines: list[str]) -> list[str]:
        index = self._line(lines)
        assert index is not None
        column = self.rng.randint(0, len(lines[index]))
        typed = "".join(self.rng.choice(_TYPED) for _ in range(self.rng.randint(1, 3)))
        lines[index] = lines[index][:column] + typed + lines[index][column:]
        return lines

    def _backspace(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines)
        assert index is not None
        line = lines[index]
        if not line:
            return None
        column = self.rng.randint(1, len(line))
        gone = self.rng.randint(1, min(4, column))
        lines[index] = line[: column - gone] + line[column:]
        return lines

    def _enter(self, lines: list[str]) -> list[str]:
        index = self._line(lines)
        assert index is not None
        line = lines[index]
        column = self.rng.randint(0, len(line))
        indent = line[: len(line) - len(line.lstrip())]
        lines[index : index + 1] = [line[:column], indent + line[column:].lstrip()]
        return lines

    def _blank_line(self, lines: list[str]) -> list[str]:
        lines.insert(self.rng.randint(0, len(lines)), "")
        return lines

    def _delete_lines(self, lines: list[str]) -> list[str] | None:
        if len(lines) < 4:
            return None
        index = self.rng.randrange(len(lines) - 1)
        del lines[index : index + self.rng.randint(1, 3)]
        return lines

    def _number(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines, _NUMBER.pattern)
        if index is None:
            return None
        matches = list(_NUMBER.finditer(lines[index]))
        match = self.rng.choice(matches)
        value = int(match.group())
        new = str(self.rng.choice([value + 1, max(0, value - 1), value * 2, 3, 8, 127]))
        lines[index] = lines[index][: match.start()] + new + lines[index][match.end() :]
        return lines

    def _mesh(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines, r"make_mesh|Mesh\(")
        if index is None:
            return None
        line = lines[index]
        replacements = [
            ("(2, 4)", "(4, 2)"),
            ("(2, 4)", "(8,)"),
            ('"model"', '"tensor"'),
            ("4", "3"),
            ("2", "1"),
        ]
        old, new = self.rng.choice(replacements)
        if old not in line:
            return None
        lines[index] = line.replace(old, new, 1)
        return lines

    def _method_body(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines, r"^\s*def ")
        if index is None:
            return None
        indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())] + "    "
        body = index + 1
        while body < len(lines) and lines[body].strip() and not lines[body].rstrip().endswith(":"):
            body += 1  # past a signature written over several lines
        at = min(len(lines), body + 1)
        lines.insert(at, indent + self.rng.choice(_STATEMENTS))
        return lines

    def _method_line(self, lines: list[str]) -> list[str] | None:
        """A number or a name changed in a line of a method's body, the line count kept: the
        edit that re-analyses only that method when nothing else reads what it changed."""
        index = self._line(lines, r"^        +(?!def |@|#)\S")
        if index is None:
            return None
        line = lines[index]
        words = list(_NAME_OR_NUMBER.finditer(line))
        if not words:
            return None
        match = self.rng.choice(words)
        new = self.rng.choice(_REPLACEMENTS[match.group().isdigit()])
        lines[index] = line[: match.start()] + new + line[match.end() :]
        return lines

    def _comment(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines)
        assert index is not None
        line = lines[index]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if not stripped:
            return None
        lines[index] = indent + (stripped[2:] if stripped.startswith("# ") else "# " + stripped)
        return lines

    def _trailing_comment(self, lines: list[str]) -> list[str] | None:
        """A comment typed, changed or removed at the end of a line, or trailing whitespace:
        edits that leave the tree as it was, some with text the module's text searches read
        (`jit(step`, a call in a comment, non-ASCII)."""
        index = self._line(lines, r"\S")
        if index is None:
            return None
        code, hash_, _ = lines[index].partition("  #")
        lines[index] = code + self.rng.choice(_TRAILING) if hash_ or self.rng.random() < 0.8 else code
        return lines

    def _suppress(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines, r"device_put|with_sharding_constraint|place\(")
        if index is None:
            return None
        lines[index] += self.rng.choice(
            ["  # shardls: ignore", "  # noqa: SH001", "  # shardls: ignore[SH013]"]
        )
        return lines

    def _paste_segment(self, lines: list[str]) -> list[str] | None:
        starts = [i for i, line in enumerate(lines) if line[:1].isalpha() or line.startswith("@")]
        if len(starts) < 2:
            return None
        pick = self.rng.randrange(len(starts) - 1)
        block = lines[starts[pick] : starts[pick + 1]]
        at = self.rng.choice(starts)
        lines[at:at] = block
        return lines

    def _open_string_or_bracket(self, lines: list[str]) -> list[str]:
        index = self._line(lines)
        assert index is not None
        lines.insert(index, self.rng.choice(['"""', "x = (", "'''Doc", "y = [1,"]))
        return lines

    def _indent(self, lines: list[str]) -> list[str] | None:
        index = self._line(lines)
        assert index is not None
        line = lines[index]
        if line.startswith("    ") and self.rng.random() < 0.5:
            lines[index] = line[4:]
        else:
            lines[index] = "    " + line
        return lines

    def _undo(self, lines: list[str]) -> list[str] | None:
        if len(self.history) < 2:
            return None
        return self.rng.choice(self.history[:-1]).split("\n")


_TRAILING = [
    "  # a note",
    "  # another note",
    "  # shardls: ignore[SH001]",
    "  # jax.jit(step) and nnx.vmap(place)",
    "  # shape (rows, cols)",
    "  # größe",
    "   ",
]


def moving_sequence(fixture: Fixture, seed: int, steps: int) -> list[Edit | Whole]:
    """`steps` changes of the fixture's text, from `seed`: edits that move lines (`Editor.move`)
    sent as ranges, or two of them in one change sent whole (a formatter's several regions),
    and undos, redos and reverts sent whole."""
    rng = random.Random(seed)
    editor = Editor(fixture.text, rng)
    undone: list[str] = []
    """The texts undone, the last first: what a redo brings back."""
    changes: list[Edit | Whole] = []
    while len(changes) < steps:
        choice = rng.random()
        if choice < 0.35 and len(editor.history) > 1:
            undone.append(editor.history.pop())
            new = editor.history[-1]
        elif choice < 0.45 and undone:
            new = undone.pop()
            editor.history.append(new)
        elif choice < 0.55 and editor.text != fixture.text:
            new = fixture.text
            editor.history.append(new)
        else:
            undone.clear()
            edit = editor.move()
            if choice < 0.7:
                editor.move()
                del editor.history[-2]  # one change: its undo goes back past both
                changes.append(Whole(editor.text))
            else:
                changes.append(edit)
            continue
        editor.text = new
        changes.append(Whole(new))
    return changes


def sequence(fixture: Fixture, seed: int, steps: int) -> list[Edit | FileEdit]:
    """`steps` edits of the fixture's text (and now and then of its other files), from `seed`."""
    rng = random.Random(seed)
    editor = Editor(fixture.text, rng)
    others = dict(fixture.files)
    edits: list[Edit | FileEdit] = []
    for _ in range(steps):
        if others and rng.random() < 0.08:
            name = rng.choice(sorted(others))
            others[name] = others[name].replace("64", "63") if "64" in others[name] else DIMS
            edits.append(FileEdit(name, others[name]))
        else:
            edits.append(editor.step())
    return edits
