"""Problems: what JAX would reject (or quietly mishandle), as data the renderings can explain.

Every problem carries a stable code so users can select, ignore and suppress it, and the numbers
behind the message so a quick fix or a hover can reuse them without parsing text.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Problem:
    """One finding. `data` holds the numbers that explain it (dimension, size, factor, ...)."""

    code: str
    severity: Severity
    message: str
    data: Mapping[str, object] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR
