"""`steps_between`: a change of several regions of lines becomes texts that change one region at
a time, from the top, ending one step short of the new text; a change of one region has none."""

from __future__ import annotations

import random

from shardls.analysis.text_diff import line_edit, steps_between

_LINES = ["", "    return x", "x = 1", "def f(x):", ")", "    pass", "y = P('data')"]


def test_one_region_needs_no_step() -> None:
    old = "\n".join(f"line_{n} = {n}" for n in range(40))
    new = old.replace("line_20 = 20", "line_20 = 21\n")
    assert steps_between(old, tuple(old.split("\n")), new).texts == []


def test_an_enter_at_the_top_and_a_line_deleted_below_are_two_steps() -> None:
    lines = [f"line_{n} = {n}" for n in range(40)]
    old = "\n".join(lines)
    new = "\n".join(["", *lines[:30], *lines[31:]])
    (step,) = steps_between(old, tuple(lines), new).texts
    assert step == "\n".join(["", *lines])


def test_each_step_changes_one_region_from_the_top_and_the_last_is_the_new_text() -> None:
    """Random texts of repeated lines (blank lines, `return x`) edited in several places: each
    step's edit leaves above it the new text's lines (the regions done) and below it the old
    text's (the regions to come), and the steps' edits go down the file."""
    rng = random.Random(7)
    for _ in range(300):
        old_lines = [rng.choice(_LINES) + ("" if rng.random() < 0.6 else f"  # {n}") for n in range(60)]
        new_lines = list(old_lines)
        for _ in range(rng.randint(1, 12)):
            at = rng.randrange(len(new_lines))
            kind = rng.randrange(3)
            if kind == 0:
                new_lines.insert(at, rng.choice(_LINES))
            elif kind == 1 and len(new_lines) > 1:
                del new_lines[at]
            else:
                new_lines[at] = "z = 2"
        old, new = "\n".join(old_lines), "\n".join(new_lines)
        texts = [old, *steps_between(old, tuple(old_lines), new).texts, new]
        assert len(texts) <= 10  # at most 8 regions
        done = 0
        for before, after in zip(texts, texts[1:]):
            edit = line_edit(before, tuple(before.split("\n")), after)
            below = len(before.split("\n")) - edit.old_last - 1
            assert before != after and edit.first >= done
            assert edit.lines[: edit.first] == tuple(new_lines[: edit.first])
            assert before.split("\n")[edit.old_last + 1 :] == old_lines[len(old_lines) - below :]
            done = edit.new_last + 1


def test_the_edit_of_a_change_without_steps_is_the_parse_s_own() -> None:
    """`Workspace.module` hands the diff it made to the parse when there is no step between the
    two texts (the parse does not compare them again): it is the diff of those two texts."""
    rng = random.Random(11)
    for _ in range(200):
        old_lines = [rng.choice(_LINES) for _ in range(30)]
        new_lines = list(old_lines)
        for _ in range(rng.randint(1, 3)):
            new_lines[rng.randrange(len(new_lines))] = rng.choice(_LINES)
        old, new = "\n".join(old_lines), "\n".join(new_lines)
        steps = steps_between(old, tuple(old_lines), new)
        assert steps.edit == line_edit(old, tuple(old_lines), new)
        assert steps.last_edit == (None if steps.texts else steps.edit)
