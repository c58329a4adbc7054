"""Every fix shardls offers for a diagnostic, in the order an editor lists them."""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic, Site
from shardls.analysis.suppressions import UNUSED
from shardls.fixes.model import Fix, FixSource
from shardls.fixes.rewrites import FIXES, Context
from shardls.fixes.sharding_types import TYPE_FIXES
from shardls.fixes.suppress import ignore_fix, unused_suppression_fix


def fixes_for(diagnostic: Diagnostic, source: FixSource, site: Site | None = None) -> list[Fix]:
    """The fixes for a diagnostic of `source`; the last one silences it on its line."""
    if diagnostic.code == UNUSED:
        own = unused_suppression_fix(diagnostic, source)
    else:
        make = FIXES.get(diagnostic.code) or TYPE_FIXES.get(diagnostic.code)
        own = make(Context(diagnostic, source, site)) if make else []
    return [*own, *ignore_fix(diagnostic, source)]
