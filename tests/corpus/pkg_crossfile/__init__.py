"""A small package whose model imports its config from a sibling module (cross-file imports)."""
