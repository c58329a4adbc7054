"""shardls in a real Emacs 28 with eglot 1.9 (Debian's emacs-nox and elpa-eglot, batch mode):
diagnostics through Flymake, the hover eldoc shows, and an edit.

eglot_client.el configures eglot as a user would (`eglot-server-programs`, the settings as
`:initializationOptions` there or in `eglot-workspace-configuration`), then writes what Emacs
holds (Flymake's diagnostics, eglot's hover text) to JSON; the assertions are here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from editor_helpers import (
    HOVER_SHAPE,
    INDIVISIBLE_LINE,
    SETTINGS,
    editor_job,
    require,
    run_editor,
)

SCRIPT = Path(__file__).with_name("eglot_client.el")


@pytest.mark.parametrize("route", ["initialization_options", "workspace_configuration"])
def test_eglot_shows_diagnostics_hover_and_follows_an_edit(tmp_path: Path, route: str) -> None:
    emacs = require("emacs", "emacs-nox elpa-eglot")
    settings = SETTINGS if route == "initialization_options" else {"shardls": SETTINGS}
    env, result = editor_job(tmp_path, {route: settings})

    # Not -Q: Debian's site-start is what puts elpa-eglot on the load path.
    report = run_editor([emacs, "--batch", "-l", str(SCRIPT)], env, result)

    assert report["ok"], report["error"]
    assert report["exit_code"] == 0, report["stderr"]
    assert report["major_mode"] == "python-mode"
    assert report["managed"]
    # Flymake's diagnostics: SH001 on the indivisible line, the SH005 that the settings ignore gone.
    assert report["diagnostics_arrived"], report["publishes"]
    assert [(d["code"], d["line"]) for d in report["diagnostics"]] == [("SH001", INDIVISIBLE_LINE)]
    assert report["diagnostics"][0]["type"] == "eglot-error"
    assert report["diagnostics"][0]["text"].startswith("shardls [SH001]: dimension 0 of [50257, 1024]")
    # The hover eldoc would show for P(None, "model"), with bfloat16 from the settings.
    assert report["hover_provider"]
    first = report["hover"].split("\n")[0].replace("`", "")
    assert first.startswith("bfloat16[8,1024@model]"), first
    assert HOVER_SHAPE in first
    assert "│ dev 0, 4 │" in report["hover"]  # the device grid: devices 0 and 4 hold [:, 0:256]
    # Deleting the indivisible line clears its diagnostic (incremental didChange from eglot).
    assert report["cleared_after_edit"], report["publishes"]
    assert report["diagnostics_after_edit"] == []
    assert report["stopped"]
