"""The persistent cache of results: a data-only codec of facts, a cache folder on disk, and what a result depends on."""
