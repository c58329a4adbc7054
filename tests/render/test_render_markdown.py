"""Markdown for hovers and the inlay-hint label."""

from __future__ import annotations

from shardls.render.inlay import block_text
from shardls.render.markdown import markdown_document


def test_each_line_stays_on_its_own_and_blocks_stay_intact() -> None:
    lines = [
        "`f32[8]`  →  per device `f32[4]`",
        "2 distinct shards",
        "**rules**:",
        "- a",
        "- b",
        "",
        "```text",
        "x",
        "",
        "y",
        "```",
        "tail",
    ]
    assert markdown_document(lines) == (
        "`f32[8]`  →  per device `f32[4]`  \n2 distinct shards  \n**rules**:"
        "\n\n- a\n- b"
        "\n\n```text\nx\n\ny\n```"
        "\n\ntail"
    )


def test_block_text() -> None:
    assert block_text((8, 4), 2) == "[8, 4] ×2"
    assert block_text((), 1) == "[]"
