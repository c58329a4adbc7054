"""The few characters an editor shows after a site (an inlay hint): what one device holds.

`→ [8, 4] ×2` reads as "each device holds an 8×4 block, and every block is on 2 devices"; with no
mesh known here the block is a formula, `→ [b/|data|, s]`; a layer call that creates several
parameters gets one label naming each. Quick-fix titles use the same
notation for the layout a fix leads to.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.analysis.facts import Dim, Site
from shardls.render.site_text import dim_text, shard_formula


def shard_label(sites: Sequence[Site]) -> str | None:
    """The label for the sites written at one place; None when no shard shape is known."""
    parts = []
    for site in sites:
        shard = site.shard_shape
        formula = shard_formula(site)
        if shard is not None and site.layout is not None:
            block = block_text(shard, site.layout.copies)
        elif site.layout is None and formula is not None:
            block = "[" + ", ".join(formula) + "]"  # no mesh known here: `[b/|data|, s]`
        else:
            continue
        parts.append(f"{site.name.rsplit('.', 1)[-1]} {block}" if len(sites) > 1 and site.name else block)
    return "→ " + ", ".join(parts) if parts else None


def block_text(shard: Sequence[Dim], copies: int) -> str:
    """`[8, 4] ×2`: one device's block, and on how many devices each block is."""
    return "[" + ", ".join(map(dim_text, shard)) + "]" + (f" ×{copies}" if copies > 1 else "")
