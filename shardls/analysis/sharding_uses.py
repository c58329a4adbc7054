"""A NamedSharding built on its own answers with the arrays it meets.

`sharding = NamedSharding(mesh, P("data"))` has no array, so its site (`named_sharding`) has no
shape of its own. The placements that use the sharding do: `jax.device_put(x, sharding)`,
`with_sharding_constraint`, `reshard`, `jax.jit(..., in_shardings=sharding)`,
`make_array_from_callback(shape, sharding, ...)`, `ShapeDtypeStruct(..., sharding=sharding)`.
Each of them remembers where the sharding it places was built (`Site.sharding_span`, from the
`ShardingV`'s span, which the value carries wherever the code passes it); here, once the whole
file's sites are known, each `named_sharding` site gets those uses.

A helper that returns `NamedSharding(mesh, P(*args))` is walked once per call (its sites carry
the call's arguments), so each call's sharding is a site of its own, with its own spec; a use
belongs to the site built at the same place with the same spec and mesh.

Certainty: a use whose shape is not known adds nothing. When the uses whose shape is known all
agree on one shape, per-device shape and dtype, the site takes them, with the layout they share
and the assumptions they carry (a default device count stays named); otherwise its shape stays
unknown and its uses say what it meets. No shape is ever made up from the spec alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from shardls.analysis.facts import Site, SiteKind, Span


def with_uses(sites: Sequence[Site]) -> list[Site]:
    """The sites, each `named_sharding` site with the uses of its sharding in this file (and the
    shape they agree on); every other site as it is. Nothing else changes: no diagnostic comes
    from here, since each use reported its own problems where JAX raises them."""
    built: dict[Span, list[int]] = {}
    for index, site in enumerate(sites):
        if site.kind is SiteKind.NAMED_SHARDING:
            built.setdefault(site.span, []).append(index)
    if not built:
        return list(sites)
    uses: dict[int, list[Site]] = {}
    for site in sites:
        if site.sharding_span is None or site.kind is SiteKind.NAMED_SHARDING:
            continue
        for index in built.get(site.sharding_span, ()):
            if _same_sharding(sites[index], site):
                uses.setdefault(index, []).append(site)
                break
    return [_linked(site, uses[index]) if index in uses else site for index, site in enumerate(sites)]


def _same_sharding(built: Site, use: Site) -> bool:
    """Whether a use places the sharding of this site: the same spec on the same mesh (a helper's
    call with other arguments built another one at the same place)."""
    if built.spec != use.spec or built.mesh is None or use.mesh is None:
        return False
    return (built.mesh.mesh, built.mesh.span, built.mesh.path) == (
        use.mesh.mesh,
        use.mesh.span,
        use.mesh.path,
    )


def _linked(site: Site, uses: list[Site]) -> Site:
    ordered = tuple(sorted(uses, key=lambda use: (use.span, use.kind.value, use.name or "")))
    known = [use for use in ordered if use.shape is not None]
    if not known or len({(use.shape, use.shard_dims, use.dtype) for use in known}) != 1:
        return replace(site, uses=ordered)
    first = known[0]
    return replace(
        site,
        shape=first.shape,
        dtype=first.dtype,
        layout=first.layout,
        symbolic_dims=first.symbolic_dims,
        assumptions=_unique(site.assumptions, *(use.assumptions for use in known)),
        provenance=_unique(*(use.provenance for use in known)),
        shape_reason=None,
        uses=ordered,
    )


def _unique(*groups: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))
