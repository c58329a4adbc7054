// Puts the server into bundled/libs: shardls from this repository and its pure-Python
// dependencies (requirements.txt), so that installing the .vsix is all a user does. Then checks
// that the bundle alone starts the server: in an interpreter that sees no site-packages (-I -S),
// every module the server imports must come from bundled/libs.
//
// The build's Python (with pip) is SHARDLS_BUILD_PYTHON, else python3 on PATH.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const extension = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repository = resolve(extension, '..');
const libs = join(extension, 'bundled', 'libs');
const python = process.env.SHARDLS_BUILD_PYTHON || 'python3';

function run(...args) {
  console.log(`+ ${python} ${args.map((arg) => (arg.includes('\n') ? '<script>' : arg)).join(' ')}`);
  execFileSync(python, args, { stdio: 'inherit', cwd: extension });
}

function compiledFiles(folder) {
  return readdirSync(folder, { recursive: true })
    .map((name) => join(folder, name))
    .filter((path) => /\.(so|pyd|dylib)$/.test(path) && statSync(path).isFile());
}

rmSync(join(extension, 'bundled'), { recursive: true, force: true });
const install = ['-m', 'pip', 'install', '--no-deps', '--no-compile', '--disable-pip-version-check', '--target', libs];
// py3-none-any wheels only: one bundle for every Python >= 3.10 on every platform.
const pure = '--only-binary=:all: --implementation py --abi none --platform any --python-version 3.10'.split(' ');
run(...install, ...pure, '--require-hashes', '--requirement', 'requirements.txt');
// From a copy of the sources, so that the build leaves nothing (build/, *.egg-info) in the repository.
const sources = mkdtempSync(join(tmpdir(), 'shardls-bundle-'));
for (const name of ['pyproject.toml', 'README.md', 'shardls']) {
  cpSync(join(repository, name), join(sources, name), {
    recursive: true,
    filter: (path) => !path.includes('__pycache__'),
  });
}
try {
  run(...install, sources);
} finally {
  rmSync(sources, { recursive: true, force: true });
}
// Console scripts with this machine's shebang, and the build folder's path (pip's direct_url.json).
rmSync(join(libs, 'bin'), { recursive: true, force: true });
for (const info of readdirSync(libs).filter((name) => name.endsWith('.dist-info'))) {
  rmSync(join(libs, info, 'direct_url.json'), { force: true });
}

const compiled = compiledFiles(libs);
if (compiled.length > 0) {
  throw new Error(`the bundle must be pure Python, but it holds ${compiled.join(', ')}`);
}
if (!existsSync(join(libs, 'shardls', 'server', 'server.py'))) {
  throw new Error(`no shardls server in ${libs}`);
}

const check = `
import sys
libs = sys.argv[1]
sys.path.insert(0, libs)
from shardls.cli.main import main
from shardls.server.server import create_server
create_server()
outside = sorted(
    name for name, module in sys.modules.items()
    if name.split(".")[0] in ("shardls", "pygls", "lsprotocol", "cattrs", "attrs", "typing_extensions")
    and not (getattr(module, "__file__", None) or libs).startswith(libs)
)
assert not outside, f"imported from outside the bundle: {outside}"
heavy = [name for name in ("numpy", "jax", "flax") if name in sys.modules]
assert not heavy, f"the server must not import {heavy}"
print(f"bundle OK: Python {sys.version.split()[0]} starts the server from {libs} alone")
`;
run('-I', '-S', '-B', '-c', check, libs);
