/**
 * A booby-trapped workspace folder: every way a repository could make the extension run its code
 * (a program named in its settings, a committed `.venv`, modules that shadow the standard library
 * or shardls, arguments that write a file), each trap leaving a marker file if it runs. Also
 * proves that each trap does fire when run the careless way, so that "no marker" means something.
 */

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export interface TrapFolder {
  readonly folder: string;
  /** Where the traps leave their markers (outside the folder, so the server never sees them). */
  readonly markers: string;
  /** An "activated venv" of the folder: put first on PATH, it must still not run. */
  readonly venvBin: string;
}

/** Modules Python imports at start-up from any folder on sys.path (PYTHONPATH, say). */
const STARTUP_TRAPS = ['sitecustomize.py', 'usercustomize.py'];
/** Modules a Python started in the folder would import from it instead of the real ones. */
const PYTHON_TRAPS = [
  ...STARTUP_TRAPS,
  'json.py',
  'jax.py',
  'dataclasses.py',
  'typing_extensions.py',
  'shardls/__init__.py',
  'shardls/__main__.py',
  'pygls/__init__.py',
];
/** Programs of the folder that a careless extension would run. */
const PROGRAM_TRAPS = ['tools/python', '.venv/bin/python', '.venv/bin/python3'];
/**
 * The model the hover is checked on. No bare `import jax`: with a `jax.py` beside it, shardls
 * (like Python) takes that file for `jax`; `jax.numpy`, `jax.sharding` and `jax.experimental`
 * are not in it and stay JAX's.
 */
const TRAPPED_MODEL = `import jax.numpy as jnp
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))

weights = jnp.zeros((8, 16), device=NamedSharding(mesh, P(None, "model")))
`;

/** Where the folder's settings ask the server to write its log. */
const LOG_FILE_MARKER = 'log-file-from-workspace-settings.log';

/** The folder in `root`; `python` (an absolute path) is what its program traps run once they have left their marker. */
export function trapFolder(root: string, python: string): TrapFolder {
  const folder = path.join(root, 'repository');
  const markers = path.join(root, 'markers');
  mkdirSync(markers, { recursive: true });
  const marker = (name: string) => path.join(markers, name.replace(/\//g, '_'));
  for (const name of PYTHON_TRAPS) {
    write(path.join(folder, name), `open(${JSON.stringify(marker(name))}, "w").close()\n`);
  }
  for (const name of PROGRAM_TRAPS) {
    const file = path.join(folder, name);
    // It even works as Python, so that only the marker can tell that it ran.
    write(file, `#!/bin/sh\n: > '${marker(name)}'\nexec '${python}' "$@"\n`);
    chmodSync(file, 0o755);
  }
  write(path.join(folder, '.venv', 'pyvenv.cfg'), 'home = /usr/bin\ninclude-system-site-packages = false\n');
  write(
    path.join(folder, '.vscode', 'settings.json'),
    JSON.stringify(
      {
        'shardls.interpreter': path.join(folder, 'tools', 'python'),
        'shardls.importStrategy': 'fromEnvironment',
        'shardls.args': ['--log-file', path.join(markers, LOG_FILE_MARKER)],
        'python.defaultInterpreterPath': path.join(folder, '.venv', 'bin', 'python'),
      },
      null,
      2,
    ),
  );
  write(path.join(folder, 'model.py'), TRAPPED_MODEL);
  return { folder, markers, venvBin: path.join(folder, '.venv', 'bin') };
}

/** Runs every trap the careless way (in the folder, not isolated) and checks that each leaves its marker. */
export function proveTrapsFire({ folder, markers }: TrapFolder, python: string): void {
  const careless = { cwd: folder, stdio: 'pipe' as const, env: { ...process.env, PYTHONPATH: folder } };
  execFileSync(python, ['-c', 'pass'], careless);
  for (const name of PYTHON_TRAPS.filter((each) => !STARTUP_TRAPS.includes(each))) {
    const module = name.replace(/(\/__init__|\/__main__)?\.py$/, '');
    execFileSync(python, name.endsWith('__main__.py') ? ['-m', module] : ['-c', `import ${module}`], careless);
  }
  for (const name of PROGRAM_TRAPS) {
    execFileSync(path.join(folder, name), ['-c', 'pass'], careless);
  }
  const expected = [...PYTHON_TRAPS, ...PROGRAM_TRAPS].map((name) => name.replace(/\//g, '_')).sort();
  const left = markersIn(markers);
  if (JSON.stringify(left) !== JSON.stringify(expected)) {
    throw new Error(`the traps did not all fire when run: ${left.join(', ')}`);
  }
  rmSync(markers, { recursive: true });
  mkdirSync(markers);
}

/** The markers left so far: the traps that ran. */
export function markersIn(markers: string): string[] {
  return readdirSync(markers).sort();
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
