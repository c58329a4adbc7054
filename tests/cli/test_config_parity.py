"""ruff's configuration and run flags, with ruff's meanings: extend-select/extend-ignore,
per-file-ignores, --show-settings, --exit-zero, --quiet/--silent, --isolated, --no-cache,
standard input, "did you mean" for what is mistyped, and exit statuses (a crash is never 1)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from check_helpers import BAD, GOOD, TYPO, check, check_json, write

from shardls.cli import check_cmd
from shardls.config import SettingsLayer, merge_settings, selected_rules


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _codes(capsys: pytest.CaptureFixture[str], *argv: str) -> list[tuple[str, str]]:
    return [(d["path"], d["code"]) for d in check_json(capsys, *argv)[1]["diagnostics"]]


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


# -- rule selection ----------------------------------------------------------------------------


def _layer(**fields: frozenset[str]) -> SettingsLayer:
    return SettingsLayer("test", **fields)  # type: ignore[arg-type]


def test_the_most_specific_selector_decides_and_ignore_wins_a_tie() -> None:
    rules = selected_rules([_layer(select=frozenset({"SH001"}), ignore=frozenset({"SH0"}))])
    assert rules == {"SH001"}
    assert "SH001" not in selected_rules([_layer(select=frozenset({"SH001"}), ignore=frozenset({"SH001"}))])
    everything_but = selected_rules([_layer(select=frozenset({"ALL"}), ignore=frozenset({"SH1"}))])
    assert "SH001" in everything_but and not any(code.startswith("SH1") for code in everything_but)


def test_extend_select_adds_over_a_lower_ignore() -> None:
    config = _layer(ignore=frozenset({"SH1"}))
    flags = _layer(extend_select=frozenset({"SH104"}))
    rules = selected_rules([config, flags])
    assert "SH104" in rules and "SH105" not in rules


def test_a_higher_select_starts_afresh_and_extend_ignore_accumulates() -> None:
    config = _layer(extend_select=frozenset({"SH2"}), extend_ignore=frozenset({"SH002"}))
    assert selected_rules([config, _layer(select=frozenset({"SH0"}))]) == {
        code for code in selected_rules([]) if code.startswith("SH0")
    }
    both = selected_rules([config, _layer(extend_ignore=frozenset({"SH003"}))])
    assert "SH002" not in both and "SH003" not in both and "SH001" in both


def test_extend_select_and_extend_ignore_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"typo.py": TYPO, "bad.py": BAD, "shardls.toml": "select = ['SH001']\n"})
    assert _codes(capsys) == [("bad.py", "SH001")]
    assert _codes(capsys, "--extend-select", "SH005") == [("bad.py", "SH001"), ("typo.py", "SH005")]
    assert _codes(capsys, "--extend-select", "SH005", "--extend-ignore", "SH001") == [("typo.py", "SH005")]


def test_extend_keys_in_the_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    write(
        Path("."),
        {"typo.py": TYPO, "bad.py": BAD, "pyproject.toml": "[tool.shardls]\nextend-ignore = ['SH005']\n"},
    )
    assert _codes(capsys) == [("bad.py", "SH001")]
    assert _codes(capsys, "--ignore", "SH001") == []  # extend-ignore stays under a flag's ignore


# -- per-file-ignores --------------------------------------------------------------------------


def test_per_file_ignores(capsys: pytest.CaptureFixture[str]) -> None:
    write(
        Path("."),
        {
            "pyproject.toml": '[tool.shardls]\nper-file-ignores = {"tests/*" = ["SH001"], "!src/**" = ["SH005"]}\n',
            "bad.py": BAD,
            "tests/bad.py": BAD,
            "tests/deep/bad.py": BAD,
            "src/typo.py": TYPO,
            "typo.py": TYPO,
        },
    )
    # `tests/*` matches the folder tests/deep too (gitignore-style, and ruff's `*` crosses `/`)
    assert _codes(capsys) == [("bad.py", "SH001"), ("src/typo.py", "SH005")]
    # the flag replaces the configuration's; the extend flag adds to it
    assert ("tests/bad.py", "SH001") in _codes(capsys, "--per-file-ignores", "nothing.py:SH1")
    extended = _codes(capsys, "--extend-per-file-ignores", "/bad.py:SH001")
    assert extended == [("src/typo.py", "SH005")]


def test_per_file_ignores_bad_value_names_the_pattern(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"shardls.toml": 'per-file-ignores = {"tests/*" = ["SH999"]}\n', "bad.py": BAD})
    result = check(capsys)
    assert result.code == 2
    assert "shardls.toml: per-file-ignores: 'tests/*': 'SH999' is not a rule code" in result.err
    assert check(capsys, "--per-file-ignores", "SH001").code == 2


# -- --show-settings ---------------------------------------------------------------------------


def test_show_settings(capsys: pytest.CaptureFixture[str]) -> None:
    write(
        Path("."),
        {
            "pyproject.toml": "[tool.shardls]\ndevice-count = 16\nignore = ['SH1']\n"
            'per-file-ignores = {"tests/*" = ["SH001"]}\n',
            "tests/bad.py": BAD,
        },
    )
    result = check(capsys, "--show-settings", "--mesh", "data=2", "tests")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:3] == [
        'Resolved settings for: "tests/bad.py"',
        'Settings path: "pyproject.toml"',
        'Workspace root: "."',
    ]
    assert any(line.startswith("device-count = 16 ") and line.endswith("# pyproject.toml") for line in lines)
    assert any("default-mesh = " in line and line.endswith("# the command line") for line in lines)
    enabled = lines[lines.index("rules.enabled = [") + 1 :]
    assert '    "SH001",  # indivisible-dimension' in enabled
    assert not any('"SH104"' in line for line in enabled[: enabled.index("]")])
    assert lines[-3:] == ["rules.ignored-in-this-file = [", '    "SH001",  # indivisible-dimension', "]"]


# -- exit statuses and what is printed ---------------------------------------------------------


def test_exit_zero_quiet_and_silent(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"bad.py": BAD, "good.py": GOOD})
    loud = check(capsys, "--output-format", "concise")
    assert loud.code == 1 and loud.out.splitlines()[-1].startswith("Found 1 problem")
    assert check(capsys, "--exit-zero").code == 0
    assert check(capsys, "-e").code == 0
    quiet = check(capsys, "-q", "--output-format", "concise")
    assert (quiet.code, quiet.out.splitlines()) == (1, loud.out.splitlines()[:-1])
    silent = check(capsys, "--silent")
    assert (silent.code, silent.out, silent.err) == (1, "", "")
    assert check(capsys, "-q", "nothing_here/").code == 2  # usage errors still speak
    write(Path("."), {"empty/README": ""})
    assert check(capsys, "-q", "empty").err == ""  # no "no files" warning when quiet


def test_a_crash_is_status_2_with_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(Path("."), {"bad.py": BAD})

    def broken(jobs: object) -> object:
        raise RuntimeError("the analyzer\nbroke")

    monkeypatch.setattr(check_cmd, "check_files", broken)
    result = check(capsys, "--exit-zero")
    assert (result.code, result.out) == (2, "")
    assert result.err.count("\n") == 1
    assert result.err.startswith("shardls: internal error: RuntimeError: the analyzer broke at ")
    assert "please report it at https://" in result.err
    assert "Traceback" not in result.err


def test_isolated_ignores_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"bad.py": BAD, "shardls.toml": "ignore = ['SH001']\n"})
    assert check(capsys).code == 0
    assert check(capsys, "--isolated").code == 1
    both = check(capsys, "--isolated", "--config", "shardls.toml")
    assert both.code == 2 and "cannot be used with --config" in both.err
    write(Path("."), {"shardls.toml": "not = [valid"})
    assert check(capsys, "--isolated").code == 1  # a broken file is not even read


def test_no_cache_checks_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"bad.py": BAD})
    assert check(capsys, "--no-cache").out == check(capsys).out


# -- standard input ----------------------------------------------------------------------------


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, BAD)
    code, out = check_json(capsys, "-")
    assert code == 1
    assert [(d["path"], d["code"], d["line"]) for d in out["diagnostics"]] == [("-", "SH001", 6)]


def test_stdin_filename_picks_configuration_and_names_messages(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        Path("."),
        {
            "pkg/shardls.toml": 'per-file-ignores = {"tests/*" = ["SH001"]}\n',
            "pkg/model.py": GOOD,  # what is on disk does not matter: stdin is checked
        },
    )
    _stdin(monkeypatch, BAD)
    assert _codes(capsys, "--stdin-filename", "pkg/model.py") == [("pkg/model.py", "SH001")]
    _stdin(monkeypatch, BAD)
    assert _codes(capsys, "--stdin-filename", "pkg/tests/new.py") == []
    _stdin(monkeypatch, BAD)
    result = check(capsys, "--stdin-filename", "pkg/model.py", "other.py", "--output-format", "concise")
    assert "ignoring other.py in favour of standard input" in result.err
    assert result.out.startswith("pkg/model.py:6:")
    assert check(capsys, "-", "bad.py").code == 2


def test_stdin_notebook_by_its_filename(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from check_helpers import notebook

    _stdin(monkeypatch, notebook(("markdown", "# hi"), ("code", BAD)))
    code, out = check_json(capsys, "--stdin-filename", "explore.ipynb")
    assert [(d["path"], d["cell"], d["line"]) for d in out["diagnostics"]] == [("explore.ipynb", 2, 6)]


# -- did you mean ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "argv", "message"),
    [
        ({"shardls.toml": "selct = ['SH001']\n"}, (), "selct: unknown key; the keys are"),
        ({"shardls.toml": "selct = ['SH001']\n"}, (), "(did you mean 'select'?)"),
        ({"shardls.toml": "extend-ignored = ['SH001']\n"}, (), "(did you mean 'extend-ignore'?)"),
        ({"shardls.toml": "dtype = 'bfloat61'\n"}, (), "unknown dtype 'bfloat61' (did you mean 'bfloat16'?)"),
        ({}, ("--select", "indivisible-dimension"), "(did you mean SH001, indivisible-dimension?)"),
        ({}, ("--ignore", "SH0001"), "(did you mean SH001, indivisible-dimension?)"),
        ({}, ("--output-format", "sarf"), "invalid choice: 'sarf' (did you mean 'sarif'?)"),
        ({}, ("--color", "allways"), "invalid choice: 'allways' (did you mean 'always'?)"),
        ({}, ("--exit-zeroo",), "unrecognized arguments: --exit-zeroo (did you mean '--exit-zero'?)"),
    ],
)
def test_did_you_mean(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], argv: tuple[str, ...], message: str
) -> None:
    write(Path("."), {"bad.py": BAD, **files})
    result = check(capsys, *argv)
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert message in result.err


def test_did_you_mean_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_helpers import run

    result = run(capsys, "chekc")
    assert (result.code, "(did you mean 'check'?)" in result.err) == (2, True)


def test_merge_settings_without_a_file_ignores_no_file_patterns(tmp_path: Path) -> None:
    write(tmp_path, {"shardls.toml": 'per-file-ignores = {"*.py" = ["SH001"]}\n'})
    from shardls.config import load_config

    layer = load_config(tmp_path / "shardls.toml").layer
    assert merge_settings(layer).enabled("SH001")
    assert not merge_settings(layer, file=tmp_path / "m.py").enabled("SH001")


def test_the_language_server_applies_per_file_ignores_too(tmp_path: Path) -> None:
    from shardls.server.settings import SettingsStore

    write(tmp_path, {"shardls.toml": 'per-file-ignores = {"tests/" = ["SH001"]}\n'})
    store = SettingsStore(report=lambda message: None)
    assert store.for_path(str(tmp_path / "model.py")).enabled("SH001")
    assert not store.for_path(str(tmp_path / "tests" / "test_model.py")).enabled("SH001")


def test_per_file_ignores_of_an_explicit_relative_config(capsys: pytest.CaptureFixture[str]) -> None:
    write(
        Path("."), {"ci/shardls.toml": 'per-file-ignores = {"tests/" = ["SH001"]}\n', "ci/tests/bad.py": BAD}
    )
    assert check(capsys, "--config", "ci/shardls.toml", "ci").code == 0
    write(Path("."), {"ci/shardls.toml": 'per-file-ignores = {"*" = ["SH001"]}\n', "bad.py": BAD})
    assert check(capsys, "--config", "ci/shardls.toml", "bad.py").code == 1  # outside its folder


def test_show_settings_for_standard_input(capsys: pytest.CaptureFixture[str]) -> None:
    write(Path("."), {"pkg/shardls.toml": 'device-count = 4\nper-file-ignores = {"gen_*.py" = ["SH0"]}\n'})
    result = check(capsys, "--show-settings", "--stdin-filename", "pkg/gen_model.py")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:2] == ['Resolved settings for: "pkg/gen_model.py"', 'Settings path: "pkg/shardls.toml"']
    assert any(line.startswith("device-count = 4 ") for line in lines)
    ignored = lines[lines.index("rules.ignored-in-this-file = [") + 1 :]
    assert ignored == ['    "SH0",', "]"]  # a prefix, as written


def test_explain_is_isolated_too(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_helpers import run

    write(Path("."), {"bad.py": BAD, "shardls.toml": "ignore = ['SH001']\n"})
    assert "error SH001" not in run(capsys, "explain", "bad.py:6").out
    assert "error SH001 indivisible-dimension" in run(capsys, "explain", "--isolated", "bad.py:6").out
