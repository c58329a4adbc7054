"""The core's rule catalogue: stable codes, names and default severities.

Codes never change meaning once published (users write them in `ignore` lists and suppression
comments). SH0xx are about a PartitionSpec meeting a shape, SH1xx about meshes, SH3xx about
sharding in types (the trace-time errors of operations on Explicit axes).
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.core.problems import Severity


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    severity: Severity


_RULES = (
    Rule(
        "SH001",
        "indivisible-dimension",
        "A sharded dimension is not divisible by its mesh axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH002",
        "spec-longer-than-rank",
        "The PartitionSpec has more entries than the array has dimensions.",
        Severity.ERROR,
    ),
    Rule("SH003", "scalar-needs-empty-spec", "`P(None)` on a scalar; scalars take `P()`.", Severity.ERROR),
    Rule(
        "SH004",
        "duplicate-spec-axis",
        "A mesh axis is used more than once in one PartitionSpec.",
        Severity.ERROR,
    ),
    Rule(
        "SH005", "unknown-mesh-axis", "A PartitionSpec names an axis the mesh does not have.", Severity.ERROR
    ),
    Rule(
        "SH006",
        "unconstrained-without-auto-axis",
        "`P.UNCONSTRAINED` on a mesh with no Auto axis.",
        Severity.ERROR,
    ),
    Rule(
        "SH007",
        "uneven-shard-padded",
        "An indivisible dimension in `with_sharding_constraint` inside `jit`: XLA pads every shard.",
        Severity.WARNING,
    ),
    Rule(
        "SH008",
        "unconstrained-outside-constraint",
        "`P.UNCONSTRAINED` where only a concrete sharding is accepted "
        "(jit, device_put, shard_map, reshard). Flax parameters on Auto meshes accept it.",
        Severity.ERROR,
    ),
    Rule(
        "SH009",
        "invalid-unreduced-axis",
        "An unreduced/reduced axis that is unknown or not Explicit.",
        Severity.ERROR,
    ),
    Rule(
        "SH010",
        "unreduced-overlaps-partitions",
        "An axis is both a partition and unreduced/reduced, or both unreduced and reduced.",
        Severity.ERROR,
    ),
    Rule(
        "SH011",
        "reshard-on-auto-axis",
        "`reshard`/`out_sharding=` with a spec naming an Auto or Manual axis.",
        Severity.ERROR,
    ),
    Rule(
        "SH012",
        "mixed-axis-types-for-params",
        "Flax eager sharding on a mesh that mixes Auto and Explicit axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH013",
        "constraint-on-explicit-mesh",
        "`with_sharding_constraint` on an all-Explicit mesh only asserts.",
        Severity.WARNING,
    ),
    Rule(
        "SH014",
        "constraint-on-explicit-axis",
        "`with_sharding_constraint` naming an Explicit axis of a mesh that is not all Explicit, or a Manual axis of a `shard_map` body.",
        Severity.ERROR,
    ),
    Rule("SH101", "duplicate-mesh-axis-name", "Two mesh axes share a name.", Severity.ERROR),
    Rule(
        "SH102",
        "mesh-names-sizes-mismatch",
        "The mesh has a different number of axis names and axis sizes.",
        Severity.ERROR,
    ),
    Rule(
        "SH103",
        "invalid-mesh-axis-size",
        "A mesh axis size is zero, negative or not an integer.",
        Severity.ERROR,
    ),
    Rule("SH104", "mesh-larger-than-devices", "The mesh needs more devices than there are.", Severity.ERROR),
    Rule(
        "SH105",
        "mesh-device-count-mismatch",
        "The mesh constructor needs exactly as many devices as the mesh has.",
        Severity.ERROR,
    ),
    Rule(
        "SH106",
        "mesh-fill-indivisible",
        "A `-1` mesh size cannot be filled: the device count does not divide.",
        Severity.ERROR,
    ),
    Rule(
        "SH107", "mesh-uses-device-subset", "`make_mesh` silently uses only the first devices.", Severity.INFO
    ),
    Rule(
        "SH108",
        "axis-types-length-mismatch",
        "The number of axis types differs from the number of axis names.",
        Severity.ERROR,
    ),
    Rule("SH109", "mesh-several-fill-axes", "More than one mesh size is `-1`.", Severity.ERROR),
    Rule(
        "SH301",
        "ambiguous-contraction-sharding",
        "A contraction's contracting dimensions are sharded on both operands and no `out_sharding=` says where the result goes.",
        Severity.ERROR,
    ),
    Rule(
        "SH302",
        "inconsistent-contraction-sharding",
        "The contracting or batch dimensions of a contraction are sharded over different mesh axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH303",
        "duplicate-axis-in-result",
        "An operation's result would split two of its dimensions over the same mesh axis.",
        Severity.ERROR,
    ),
    Rule(
        "SH304",
        "incompatible-broadcast-shardings",
        "The operands of an elementwise operation shard the same dimension over different mesh axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH305",
        "unsupported-sharded-reshape",
        "A reshape of a sharded array that is neither one split nor one merge of dimensions, without `out_sharding=`.",
        Severity.ERROR,
    ),
    Rule(
        "SH306",
        "select-sharding-mismatch",
        "`jnp.where`/`lax.select` with cases (or a non-scalar condition) sharded differently.",
        Severity.ERROR,
    ),
    Rule(
        "SH307",
        "concatenate-sharding-mismatch",
        "`jnp.concatenate`/`jnp.stack` (or `lax.concatenate`) of operands sharded differently.",
        Severity.ERROR,
    ),
    Rule(
        "SH308",
        "sharded-indexing-needs-out-sharding",
        "Indexing or slicing a sharded dimension where JAX cannot infer the result's sharding: a gather, or a slice its mesh axes do not divide.",
        Severity.ERROR,
    ),
    Rule(
        "SH309",
        "cumulative-over-sharded-axis",
        "`jnp.cumsum`/`cumprod`/`cummax`/`cummin` along a sharded dimension, or without an axis on a sharded array.",
        Severity.ERROR,
    ),
    Rule(
        "SH310",
        "indivisible-result",
        "An operation's result keeps a mesh axis on a dimension the axis does not divide (an empty eager index of a sharded array).",
        Severity.ERROR,
    ),
    Rule(
        "SH311",
        "unreduced-rule-violation",
        "An operation given unreduced or reduced arrays in a combination its unreduced rule rejects.",
        Severity.ERROR,
    ),
    Rule(
        "SH312",
        "unreduced-rule-missing",
        "An operation JAX has no unreduced rule for, applied to an array with unreduced (or reduced) axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH313",
        "sharded-update-needs-out-sharding",
        "An indexed update (`x.at[...].set/add/...`) that selects part of a sharded dimension, or uses a sharded index, without `out_sharding=`.",
        Severity.ERROR,
    ),
    Rule(
        "SH314",
        "sort-over-sharded-axis",
        "`jnp.sort`/`jnp.argsort`/`lax.top_k` along a sharded dimension, or without an axis on a sharded array.",
        Severity.ERROR,
    ),
    Rule(
        "SH315",
        "boolean-mask-in-traced-code",
        "Indexing or updating with a boolean mask inside `jax.jit` (or another trace), where the result's shape would depend on the mask's values.",
        Severity.ERROR,
    ),
    Rule(
        "SH320",
        "jit-in-sharding-mismatch",
        "An array passed to a function jitted with `in_shardings=` is sharded differently from its in_sharding.",
        Severity.ERROR,
    ),
    Rule(
        "SH330",
        "shard-map-in-specs-mismatch",
        "An argument of a `shard_map` over Explicit axes whose in_spec is not the sharding of its type.",
        Severity.ERROR,
    ),
    Rule(
        "SH331",
        "shard-map-output-varies",
        "A `shard_map` output that varies along a manual axis its out_spec leaves out (declared replicated there).",
        Severity.ERROR,
    ),
    Rule(
        "SH332",
        "collective-mixed-varying-axes",
        "`psum`/`pmean`/`psum_scatter`/`pcast` over axes some of which the value varies along and some not.",
        Severity.ERROR,
    ),
    Rule(
        "SH333",
        "vmap-mapped-sharding-mismatch",
        "`jax.vmap` arguments whose mapped dimensions are split over different mesh axes.",
        Severity.ERROR,
    ),
    Rule(
        "SH334",
        "vmap-unmapped-sharded-along-mapped-axes",
        "An unmapped `jax.vmap` argument split over the mesh axes the mapped dimension is split over.",
        Severity.ERROR,
    ),
    Rule(
        "SH335",
        "vmap-spmd-axis-name-conflict",
        "`spmd_axis_name` naming other mesh axes than the Explicit axes the mapped dimension is split over.",
        Severity.ERROR,
    ),
)

CORE_RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
