"""shardls in a real Neovim (Debian's 0.7.2, headless): diagnostics, a hover and an edit.

nvim_client.lua does what a user's config does (vim.lsp.start_client + buf_attach_client, with
the settings as `init_options`, or as `settings` the way nvim-lspconfig sends them), then writes
what Neovim itself holds (vim.diagnostic.get, the hover response) to JSON; the assertions are here.
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

SCRIPT = Path(__file__).with_name("nvim_client.lua")


@pytest.mark.parametrize("route", ["init_options", "settings"])
def test_neovim_shows_diagnostics_hover_and_follows_an_edit(tmp_path: Path, route: str) -> None:
    nvim = require("nvim", "neovim")
    settings = SETTINGS if route == "init_options" else {"shardls": SETTINGS}
    env, result = editor_job(tmp_path, {route: settings}, root=str(tmp_path / "project"))

    report = run_editor(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"], env, result
    )

    assert report["ok"], report["error"]
    assert report["exit_code"] == 0, report["stderr"]
    # Diagnostics, as vim.diagnostic holds them: SH001 on the indivisible line, the ignored SH005 gone.
    assert report["diagnostics_arrived"], report["publishes"]
    assert [(d["code"], d["line"]) for d in report["diagnostics"]] == [("SH001", INDIVISIBLE_LINE)]
    assert report["diagnostics"][0]["severity"] == 1  # vim.diagnostic.severity.ERROR
    assert "50257" in report["diagnostics"][0]["message"]
    # Hover on P(None, "model"): Markdown with the per-device shape (bfloat16 from the settings).
    assert report["hover_provider"]
    assert report["hover_kind"] == "markdown", report.get("hover_error")
    first = report["hover_lines"][0].replace("`", "")
    assert first.startswith("bfloat16[8,1024@model]"), first
    assert HOVER_SHAPE in first
    # Deleting the indivisible line clears its diagnostic through Neovim's incremental didChange.
    assert report["cleared_after_edit"], report["publishes"]
    assert report["diagnostics_after_edit"] == []
    assert report["stopped"]
