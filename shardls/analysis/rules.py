"""Rules the analysis adds to the core's: about how code uses meshes, specs and Flax annotations."""

from __future__ import annotations

from shardls.core import CORE_RULES, Rule, Severity

_ANALYSIS_RULES = (
    Rule(
        "SH201",
        "annotated-layer-without-mesh",
        "A Flax NNX layer with sharding annotations is created with no mesh in scope.",
        Severity.ERROR,
    ),
    Rule(
        "SH202",
        "bare-spec-without-mesh-context",
        "A bare PartitionSpec is used where JAX needs `jax.set_mesh` (or a NamedSharding).",
        Severity.ERROR,
    ),
    Rule(
        "SH203",
        "deprecated-with-mesh",
        "`with mesh:` is deprecated; use `with jax.set_mesh(mesh):`.",
        Severity.WARNING,
    ),
    Rule(
        "SH204",
        "deprecated-param-sharding-keyword",
        "`nnx.Param(sharding=...)`/`sharding_names=` are deprecated; use `out_sharding=`.",
        Severity.WARNING,
    ),
    Rule(
        "SH205",
        "unmapped-logical-axis",
        "A logical axis name has no rule and is not a mesh axis.",
        Severity.ERROR,
    ),
    Rule(
        "SH206",
        "conflicting-logical-rules",
        "Context and per-variable logical axis rules disagree.",
        Severity.ERROR,
    ),
    Rule(
        "SH207",
        "shared-init-rank-mismatch",
        "MultiHeadAttention's shared kernel/bias annotation lands on an `out` parameter of another rank.",
        Severity.ERROR,
    ),
    Rule(
        "SH208",
        "stacked-without-transform-metadata",
        "Layers stacked with `nnx.vmap` lack `transform_metadata`: the spec is one rank short.",
        Severity.ERROR,
    ),
    Rule(
        "SH209",
        "syntax-error",
        "Part of the file does not parse; results there are missing until it does.",
        Severity.WARNING,
    ),
    Rule("SH210", "unreadable-file", "The file could not be read as Python source text.", Severity.ERROR),
    Rule(
        "SH211",
        "mesh-context-mismatch",
        "`shard_map` is given a mesh different from the context mesh.",
        Severity.ERROR,
    ),
    Rule(
        "SH212",
        "flax-annotation-mesh-mismatch",
        "A Flax annotation's NamedSharding is on another mesh than the one Flax picked (`mesh=` "
        "metadata or the `jax.set_mesh` context, an AbstractMesh): Flax fails an assertion.",
        Severity.ERROR,
    ),
    Rule(
        "SH213",
        "model-exceeds-hbm",
        "A model's parameters (plus optimizer state, when configured) need more memory per device "
        "than `hbm-per-device`.",
        Severity.WARNING,
    ),
    Rule(
        "SH214",
        "evaluation-budget-ended",
        "The analysis of a statement or file ran out of its step budget; what follows is missing or unknown.",
        Severity.INFO,
    ),
)

_SUPPRESSION_RULES = (
    Rule(
        "SH401",
        "unused-suppression",
        "A suppression comment silences nothing: its codes are unused, not enabled, unknown or repeated.",
        Severity.WARNING,
    ),
    Rule(
        "SH402",
        "invalid-pragma",
        "A `# shardls:` comment cannot be read: an unknown pragma, a bad value, or a code prefix "
        "or lower-case code in `ignore[...]`.",
        Severity.ERROR,
    ),
)

ANALYSIS_RULES: dict[str, Rule] = {rule.code: rule for rule in (*_ANALYSIS_RULES, *_SUPPRESSION_RULES)}
ALL_RULES: dict[str, Rule] = {**CORE_RULES, **ANALYSIS_RULES}

PROJECT_URL = "https://github.com/shardls/shardls"
RULE_DOCS = f"{PROJECT_URL}/blob/main/docs/rules/"
"""Where each rule's page (docs/rules/<CODE>.md) is published; linked from SARIF and the editor."""


def rule_url(code: str) -> str:
    return f"{RULE_DOCS}{code}.md"
