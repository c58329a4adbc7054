"""The layout calculator: pure functions over meshes, PartitionSpecs and shapes.

No I/O, no jax, nothing about source code: the analyzer and every rendering build on this.
"""

from shardls.core.context import UsageContext
from shardls.core.divisibility import dividing_axis_choices
from shardls.core.dtypes import FLOAT32, DType, parse_dtype
from shardls.core.layout import DeviceBlock, Layout, compute_layout
from shardls.core.mesh import FILL, AxisType, Mesh, MeshConstructor, resolve_mesh
from shardls.core.problems import Problem, Severity
from shardls.core.rules import CORE_RULES, Rule
from shardls.core.seed import partition_spec_layout
from shardls.core.spec import UNCONSTRAINED, PartitionSpec, normalize_entry

__all__ = [
    "CORE_RULES",
    "FILL",
    "FLOAT32",
    "UNCONSTRAINED",
    "AxisType",
    "DType",
    "DeviceBlock",
    "Layout",
    "Mesh",
    "MeshConstructor",
    "PartitionSpec",
    "Problem",
    "Rule",
    "Severity",
    "UsageContext",
    "compute_layout",
    "dividing_axis_choices",
    "normalize_entry",
    "parse_dtype",
    "partition_spec_layout",
    "resolve_mesh",
]
