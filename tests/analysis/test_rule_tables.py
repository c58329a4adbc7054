"""Regex rule tables matched against parameter paths (issue 12 §2, "Rule tables"): `re.search`
and friends on known patterns and strings, the first matching rule of a loop, key paths from
`tree_map_with_path` and `flatten_dict`, and the enclosing call's arguments a nested rule
function reads. Where a pattern, a string or a path is not known, the result is a choice or
unknown, never one rule picked."""

from __future__ import annotations

from analysis_helpers import analyze

from shardls.analysis.facts import FileAnalysis
from shardls.analysis.library.regex import matched
from shardls.analysis.values import Const, MatchV, Unknown

HEADER = """
import re
import jax, jax.numpy as jnp
from flax import traverse_util
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
"""


def specs_by_name(analysis: FileAnalysis) -> dict[str, list[tuple[str | None, ...]]]:
    """Each named site's specs (one per option of a choice), in file order."""
    found: dict[str, list[tuple[str | None, ...]]] = {}
    for site in analysis.sites:
        if site.name is not None and site.spec is not None:
            found.setdefault(site.name, []).append(tuple(map(str, site.spec.entries)))  # type: ignore[arg-type]
    return found


def test_first_matching_rule_wins_in_order() -> None:
    analysis = analyze(
        HEADER
        + """
RULES = ((r"attn/(q|k)/kernel", P("data", "model")), (r"kernel$", P("model")), (".*", P()))

def spec_for(name):
    for rule, spec in RULES:
        if re.search(rule, name) is not None:
            return spec
    raise ValueError(name)

q = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec_for("params/attn/q/kernel")))
o = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec_for("params/attn/o/kernel")))
b = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec_for("params/attn/o/bias")))
"""
    )
    assert specs_by_name(analysis) == {"q": [("data", "model")], "o": [("model",)], "b": [()]}
    assert not analysis.diagnostics


def test_an_unknown_name_or_pattern_leaves_a_choice_not_a_guess() -> None:
    analysis = analyze(
        HEADER
        + """
RULES = ((r"kernel", P("data")), (".*", P()))

def spec_for(name, rules=RULES):
    for rule, spec in rules:
        if re.match(rule, name):
            return spec
    return None

u = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec_for(unknown_name)))
r = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, spec_for("kernel", ((pattern, P("model")), (".*", P())))))
"""
    )
    assert specs_by_name(analysis) == {"u": [("data",), ()], "r": [("model",), ()]}


def test_patterns_whose_matching_is_not_bounded_are_unknown() -> None:
    assert isinstance(matched(r"(a+)+$", 0, "a" * 40 + "b", "search"), Unknown)  # nested repeat
    assert isinstance(matched(r"(a|aa)*c", 0, "a" * 40, "search"), Unknown)  # alternatives repeated
    assert isinstance(matched(r"(a)\1", 0, "aa", "search"), Unknown)  # a backreference
    assert isinstance(matched(r"(?<=a)b", 0, "ab", "search"), Unknown)  # a lookbehind
    assert isinstance(matched(r".*.*.*.*x", 0, "a" * 60, "search"), Unknown)  # too many repeats
    assert isinstance(matched("a", 0, "a" * 1000, "search"), Unknown)  # too long a string
    assert isinstance(matched("(", 0, "a", "search"), Unknown)  # invalid: re.error at run time
    assert matched(r"attention/(wq|wk)/kernel", 0, "params/attention/wk/kernel", "search") == MatchV(
        ("attention/wk/kernel", "wk")
    )
    assert matched(r"^wq", 0, "params/wq", "search") == Const(None)
    assert matched(r"params/.*", 0, "params/wq", "fullmatch") == MatchV(("params/wq",))


def test_compiled_patterns_flags_and_groups() -> None:
    analysis = analyze(
        HEADER
        + """
kernel = re.compile(r"layer_(\\d+)/KERNEL", re.IGNORECASE)
m = kernel.search("params/layer_3/kernel")
axis = "model" if m and m.group(1) == "3" else "data"
x = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(axis)))
y = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P("data") if kernel.fullmatch("bias") else P()))
"""
    )
    assert specs_by_name(analysis) == {"x": [("model",)], "y": [()]}


def test_tree_map_with_path_and_keystr() -> None:
    analysis = analyze(
        HEADER
        + """
params = {"encoder": {"kernel": jnp.zeros((8, 16)), "bias": jnp.zeros((16,))}, "layers": [jnp.zeros((4, 8))]}

def rule(path, leaf):
    name = jax.tree_util.keystr(path, simple=True, separator="/")
    if re.fullmatch(r"encoder/kernel", name):
        return P("data", "model")
    if re.fullmatch(r"layers/0", name):
        return P(None, "model")
    return P()

specs = jax.tree_util.tree_map_with_path(rule, params)
k = jax.device_put(params["encoder"]["kernel"], NamedSharding(mesh, specs["encoder"]["kernel"]))
b = jax.device_put(params["encoder"]["bias"], NamedSharding(mesh, specs["encoder"]["bias"]))
l = jax.device_put(params["layers"][0], NamedSharding(mesh, specs["layers"][0]))
names = jax.tree_util.tree_map_with_path(lambda p, x: jax.tree_util.keystr(p), params)
n = jax.device_put(params["layers"][0], NamedSharding(mesh, P("model") if names["layers"][0] == "['layers'][0]" else P()))
"""
    )
    assert specs_by_name(analysis) == {
        "k": [("data", "model")],
        "b": [()],
        "l": [("None", "model")],
        "n": [("model",)],
    }
    assert not analysis.diagnostics


def test_flatten_dict_and_leaves_with_path() -> None:
    analysis = analyze(
        HEADER
        + """
params = {"dense": {"kernel": jnp.zeros((8, 16)), "bias": jnp.zeros((16,))}, "empty": {}}
flat = traverse_util.flatten_dict(params, sep="/")
specs = {name: (P("data") if re.search("kernel", name) else P()) for name in flat}
k = jax.device_put(params["dense"]["kernel"], NamedSharding(mesh, specs["dense/kernel"]))
paths = [jax.tree_util.keystr(path) for path, _ in jax.tree_util.tree_leaves_with_path(params)]
first = jax.device_put(params["dense"]["bias"], NamedSharding(mesh, P("model") if paths[0] == "['dense']['bias']" else P()))
"""
    )
    assert specs_by_name(analysis) == {"k": [("data",)], "first": [("model",)]}


def test_a_nested_function_reads_the_enclosing_calls_arguments() -> None:
    analysis = analyze(
        HEADER
        + """
def match_rules(rules, params):
    def get_spec(name, leaf):
        for rule, ps in rules:
            if re.search(rule, name) is not None:
                return ps
        raise ValueError(name)
    return {name: get_spec(name, leaf) for name, leaf in params.items()}

params = {"wte": jnp.zeros((16, 8)), "norm": jnp.zeros((8,))}
first = match_rules((("wte", P("model")), (".*", P())), params)
second = match_rules((("wte", P("data")), (".*", P())), params)
a = jax.device_put(params["wte"], NamedSharding(mesh, first["wte"]))
b = jax.device_put(params["wte"], NamedSharding(mesh, second["wte"]))
c = jax.device_put(params["norm"], NamedSharding(mesh, second["norm"]))
"""
    )
    assert specs_by_name(analysis) == {"a": [("model",)], "b": [("data",)], "c": [()]}


def test_a_body_run_in_order_builds_lists_and_honours_break_and_else() -> None:
    analysis = analyze(
        HEADER
        + """
def joined(parts):
    keys = []
    for part in parts:
        if part == "skip":
            continue
        keys.append(part.upper())
    return "/".join(keys)

def first_even(numbers):
    for n in numbers:
        if n % 2 == 0:
            found = n
            break
    else:
        found = 0
    return found

def collected(names, logger, reorder):
    found = []
    for n in names:
        logger.info(n)
        found.append(n)
    if reorder:
        found.sort()
    return found

def counted(n):
    total = 0
    while total < n:
        total += 1
    return total

axis = "model" if joined(("a", "skip", "b")) == "A/B" else "data"
x = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(axis)))
y = jax.device_put(jnp.zeros((first_even((3, 4, 6)), 8)), NamedSharding(mesh, P("model")))
z = jax.device_put(jnp.zeros((first_even((3, 5)) + 4, 8)), NamedSharding(mesh, P("model")))
w = jax.device_put(jnp.zeros((counted(4), 8)), NamedSharding(mesh, P("model")))
kept = jax.device_put(jnp.zeros((len(collected(("a", "b", "c", "d"), log, False)), 8)), NamedSharding(mesh, P("model")))
huge = jax.device_put(jnp.zeros((len(collected(range(9000), log, False)), 8)), NamedSharding(mesh, P("model")))
sorted_ = jax.device_put(jnp.zeros((len(collected(("a", "b", "c", "d"), log, True)), 8)), NamedSharding(mesh, P("model")))
"""
    )
    sites = {s.name: s for s in analysis.sites}
    assert specs_by_name(analysis)["x"] == [("model",)]
    assert sites["y"].shard_shape == (1, 8)
    assert sites["z"].shard_shape == (1, 8)
    assert sites["kept"].shard_shape == (1, 8)  # `logger.info(n)` changes no local it follows
    # a `while` is not run; `.sort()` is not followed; 9,000 appends are more than a run makes
    for unknown in ("w", "sorted_", "huge"):
        shape = sites[unknown].shape
        assert shape is not None and not isinstance(shape[0], int)
    assert not [d for d in analysis.diagnostics if d.severity.name == "ERROR"]
