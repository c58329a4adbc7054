/** The workspaces the end-to-end test opens, written into a scratch folder. */

import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export const MODEL = `import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))

# Columns split over the 4 "model" devices; each "data" row of the mesh holds a copy.
weights = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, "model")))

# A typo in the axis name: JAX raises at run time, shardls flags it as you type.
activations = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("modle")))
`;
/** The good spec and the mistake in MODEL. */
export const GOOD = 'P(None, "model")';
export const TYPO = 'P("modle")';

/** A folder with MODEL in model.py; returns the folder. */
export function singleFolder(root: string): string {
  const folder = path.join(root, 'workspace');
  write(path.join(folder, 'model.py'), MODEL);
  return folder;
}

/** The notebook's cells: a mesh, then an array with a typo in its spec. */
export const NOTEBOOK_CELLS = [
  'import jax\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\nmesh = jax.make_mesh((4, 2), ("fsdp", "tp"))',
  'import jax.numpy as jnp\n\nx = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("fsdpp")))',
];

/**
 * Two folders: `train` assumes 16 devices in its folder settings, `explore` 32 in its
 * pyproject.toml and holds a notebook. Returns the .code-workspace file.
 */
export function multiRoot(root: string): string {
  const train = path.join(root, 'train');
  const explore = path.join(root, 'explore');
  write(path.join(train, 'model.py'), MODEL.replace(TYPO, 'P("model")'));
  write(path.join(train, '.vscode', 'settings.json'), JSON.stringify({ 'shardls.deviceCount': 16 }));
  write(path.join(explore, 'pyproject.toml'), '[tool.shardls]\ndevice-count = 32\n');
  write(path.join(explore, 'explore.ipynb'), JSON.stringify(notebook(NOTEBOOK_CELLS), null, 1));
  const file = path.join(root, 'multi.code-workspace');
  write(file, JSON.stringify({ folders: [{ path: 'train' }, { path: 'explore' }] }));
  return file;
}

function notebook(cells: readonly string[]): object {
  return {
    cells: cells.map((source) => ({
      cell_type: 'code',
      metadata: {},
      execution_count: null,
      outputs: [],
      source: source.split(/(?<=\n)/),
    })),
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  };
}

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}
