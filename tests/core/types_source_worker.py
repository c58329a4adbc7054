"""Runs source programs under real JAX and says, statement by statement, what `jax.typeof` gives
the value each statement binds, or which exception it raises (the program stops there).

`python types_source_worker.py < programs.json` with XLA_FLAGS set to the device count the
programs' meshes need; prints one JSON list of outcomes, one list per program:
`[["ok", "float32[8@X,16]"], ..., ["ShardingTypeError", ""]]`, for the statements that bind `v<i>`.
"""

from __future__ import annotations

import ast
import json
import sys
import warnings


def run(source: str) -> list[list[str]]:
    import jax

    namespace: dict[str, object] = {}
    outcomes: list[list[str]] = []
    for stmt in ast.parse(source).body:
        target = (
            stmt.targets[0].id
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
            else None
        )
        code = compile(ast.Module([stmt], []), "<program>", "exec")
        try:
            exec(code, namespace)
        except Exception as error:  # every failure is data for the comparison
            if target is not None and target.startswith("v"):
                outcomes.append([type(error).__name__, str(error)[:200]])
            return outcomes
        if target is not None and target.startswith("v"):
            outcomes.append(["ok", str(jax.typeof(namespace[target]))])
    return outcomes


def main() -> None:
    warnings.simplefilter("ignore")
    programs = json.load(sys.stdin)
    json.dump([run(source) for source in programs], sys.stdout)


if __name__ == "__main__":
    main()
