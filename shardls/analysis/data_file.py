"""A file of the workspace read as data, not as Python (a YAML config), in the version read.

The incremental analysis keeps a segment's result while every file it read is as it was: a
Python module by its `ModuleInfo` (the same object while its text is unchanged), a data file by
a `DataFile`, which the workspace hands back as the same object while the file's text is the same
(`Workspace.data_file`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class DataFile:
    path: str
    text: str | None
    """None: the file is absent or not readable."""
