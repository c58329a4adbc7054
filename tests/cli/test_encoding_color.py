"""Output that works on any terminal: an ASCII fallback for what the stream cannot encode, and
colour only where it is wanted (a terminal, NO_COLOR, FORCE_COLOR, --color)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_helpers import BAD, GOOD, HEADER, check, put, write

from shardls.cli.terminal import ascii_spelling, use_ascii_fallback, use_color

HANG_LIMIT = 120
LAYOUT = ("layout", "--mesh", "data=2,model=4", "--shape", "8,12", "--spec", "P('data', 'model')")
UNICODE_NAMES = HEADER + put("模型", "(9, 16)", "'data'")
"""SH001 on a line whose name cp1252 cannot encode."""


def _shardls(cwd: Path, encoding: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "shardls", *argv], cwd=cwd, env=env, capture_output=True, timeout=HANG_LIMIT
    )


def _as_encoding_shows_it(text: str, encoding: str) -> str:
    """`text` as a stream in `encoding` should print it: what it can encode, else the ASCII."""
    return "".join(c if c.encode(encoding, "ignore") else ascii_spelling(c) for c in text)


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
def test_layout_on_a_narrow_encoding(tmp_path: Path, encoding: str) -> None:
    wide = _shardls(tmp_path, "utf-8", *LAYOUT).stdout.decode("utf-8")
    assert "┌" in wide and "│" in wide  # the device grid is box-drawn
    done = _shardls(tmp_path, encoding, *LAYOUT)
    assert (done.returncode, done.stderr) == (0, b"")
    out = done.stdout.decode(encoding)
    assert out == _as_encoding_shows_it(wide, encoding)
    table = [line for line in out.splitlines() if line[:1] in ("+", "|")]
    assert table and table[0].startswith("+-") and len({len(line) for line in table}) == 1  # aligned
    assert ("8 distinct x 1 copy" if encoding == "ascii" else "8 distinct × 1 copy") in out


def test_check_show_layouts_on_cp1252(tmp_path: Path) -> None:
    write(tmp_path, {"bad.py": UNICODE_NAMES, "good.py": GOOD})
    done = _shardls(tmp_path, "cp1252", "check", "--show-layouts")
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr
    out = done.stdout.decode("cp1252")
    assert "device_put ??: float32[9@data,16] -> rejected by JAX (SH001)" in out
    assert "6 | ?? = jax.device_put(" in out
    assert "good.py:6:5: device_put x: float32[8@data,16] -> per device float32[4,16] ×4 copies" in out


def test_utf8_is_left_alone(tmp_path: Path) -> None:
    out = _shardls(tmp_path, "utf-8", *LAYOUT).stdout.decode("utf-8")
    assert "┌" in out and "+-" not in out


def test_ascii_spellings() -> None:
    assert [ascii_spelling(c) for c in "→×┼─│é模"] == ["->", "x", "+", "-", "|", "e", "?"]


def test_the_fallback_keeps_an_error_handler_the_user_chose() -> None:
    chosen = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="xmlcharrefreplace")
    use_ascii_fallback(chosen)
    chosen.write("→")
    chosen.flush()
    assert chosen.buffer.getvalue() == b"&#8594;"
    default = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    use_ascii_fallback(default)
    default.write("a → b")
    default.flush()
    assert default.buffer.getvalue() == b"a -> b"


# -- colour ------------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("choice", "environ", "tty", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # empty means unset (no-color.org)
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_when_to_colour(choice: str, environ: dict[str, str], tty: bool, expected: bool) -> None:
    stream = _Terminal() if tty else io.StringIO()
    assert use_color(stream, choice, environ) is expected


def test_colour_in_check_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    write(tmp_path, {"bad.py": BAD})
    plain = check(capsys)
    assert "\x1b[" not in plain.out  # not a terminal
    coloured = check(capsys, "--color", "always")
    assert "\x1b[1;31mSH001\x1b[0m" in coloured.out
    assert "\x1b[" not in check(capsys, "--color", "always", "--output-format", "json").out
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert check(capsys).out == coloured.out
    assert check(capsys, "--color", "never").out == plain.out
    stripped = coloured.out
    for code in ("\x1b[0m", "\x1b[1m", "\x1b[1;31m", "\x1b[1;34m", "\x1b[1;36m"):
        stripped = stripped.replace(code, "")
    assert stripped == plain.out  # colour adds escapes and nothing else


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize(("environ", "coloured"), [({}, True), ({"NO_COLOR": "1"}, False)])
def test_a_real_terminal_gets_colour_unless_no_color(
    tmp_path: Path, environ: dict[str, str], coloured: bool
) -> None:
    import pty

    write(tmp_path, {"bad.py": BAD})
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "shardls", "check", "--output-format", "concise"],
        cwd=tmp_path,
        env={**env, "TERM": "xterm", **environ},
        stdout=follower,
        stderr=subprocess.DEVNULL,
    ) as process:
        os.close(follower)
        assert process.wait(timeout=HANG_LIMIT) == 1
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: everything was read
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert b"SH001" in output
    assert (b"\x1b[1;31mSH001" in output) is coloured
    assert (b"\x1b[" in output) is coloured
