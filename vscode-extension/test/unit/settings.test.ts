import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { launchSettings, RESTART_KEYS, serverSettings, USER_ONLY_KEYS, type SettingReader } from '../../src/settings';

interface Manifest {
  contributes: { configuration: { properties: Record<string, { default: unknown; scope?: string }> } };
  capabilities: {
    untrustedWorkspaces: { supported: unknown; description: unknown; restrictedConfigurations: string[] };
    virtualWorkspaces: { supported: unknown };
  };
}

const MANIFEST = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as Manifest;
const PROPERTIES = MANIFEST.contributes.configuration.properties;

/** The `shardls.*` settings' defaults as package.json declares them, without the prefix. */
const DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(PROPERTIES).map(([key, property]) => [key.replace(/^shardls\./, ''), property.default]),
);

/** The settings' defaults, overridden by `values`. */
function reader(values: Record<string, unknown> = {}): SettingReader {
  return (key) => (key in values ? values[key] : DEFAULTS[key]);
}

describe('serverSettings', () => {
  it('leaves settings at their empty defaults out, so that pyproject.toml applies', () => {
    assert.deepEqual(serverSettings(reader()), { inlayHints: true, typeInlayHints: false });
    assert.deepEqual(serverSettings(reader({ defaultMesh: '  ', inlayHints: false })), {
      inlayHints: false,
      typeInlayHints: false,
    });
  });

  it('sends what the user set, under the keys the server reads', () => {
    const settings = serverSettings(
      reader({
        deviceCount: 16,
        defaultMesh: 'data=2,model=4',
        select: ['SH0'],
        ignore: ['SH104'],
        dtype: 'bfloat16',
        hbmPerDevice: '16GiB',
        optimizer: 'adamw',
      }),
    );
    assert.deepEqual(settings, {
      deviceCount: 16,
      defaultMesh: 'data=2,model=4',
      select: ['SH0'],
      ignore: ['SH104'],
      dtype: 'bfloat16',
      hbmPerDevice: '16GiB',
      optimizer: 'adamw',
      inlayHints: true,
      typeInlayHints: false,
    });
  });

  it('passes values of the wrong type on, for the server to name in a warning', () => {
    assert.deepEqual(serverSettings(reader({ deviceCount: 'many' })), {
      deviceCount: 'many',
      inlayHints: true,
      typeInlayHints: false,
    });
  });

  it('never sends the settings that only the extension reads', () => {
    const settings = serverSettings(reader({ interpreter: '/usr/bin/python3', args: ['--tcp'], logLevel: 'debug' }));
    assert.deepEqual(Object.keys(settings), ['inlayHints', 'typeInlayHints']);
  });
});

describe('launchSettings', () => {
  it('reads the defaults', () => {
    assert.deepEqual(launchSettings(reader(), reader(), true), {
      interpreter: '',
      importStrategy: 'useBundled',
      args: [],
      logLevel: 'warning',
    });
  });

  it('keeps valid values and replaces invalid ones with the defaults', () => {
    const values = {
      interpreter: ' /opt/py/bin/python ',
      importStrategy: 'fromEnvironment',
      args: ['--log-file', 3, 'x.log'],
      logLevel: 'debug',
    };
    assert.deepEqual(launchSettings(reader(values), reader(values), true), {
      interpreter: '/opt/py/bin/python',
      importStrategy: 'fromEnvironment',
      args: ['--log-file', 'x.log'],
      logLevel: 'debug',
    });
    const invalid = { interpreter: 3, importStrategy: 'pip', args: '--tcp', logLevel: 'loud' };
    assert.deepEqual(launchSettings(reader(invalid), reader(invalid), true), {
      interpreter: '',
      importStrategy: 'useBundled',
      args: [],
      logLevel: 'warning',
    });
  });

  it("takes the interpreter and the arguments (--log-file) from the user's settings alone", () => {
    const workspace = reader({ interpreter: '/repo/trap', args: ['--log-file', '/home/me/.bashrc'] });
    const user = reader({ interpreter: '/usr/bin/python3.12', args: ['--log-file', '/tmp/mine.log'] });
    assert.deepEqual(launchSettings(workspace, reader(), true), {
      interpreter: '',
      importStrategy: 'useBundled',
      args: [],
      logLevel: 'warning',
    });
    const launch = launchSettings(workspace, user, true);
    assert.equal(launch.interpreter, '/usr/bin/python3.12');
    assert.deepEqual(launch.args, ['--log-file', '/tmp/mine.log']);
  });

  it('runs the bundled shardls in Restricted Mode, whatever importStrategy says', () => {
    const everywhere = reader({ importStrategy: 'fromEnvironment' });
    assert.equal(launchSettings(everywhere, everywhere, true).importStrategy, 'fromEnvironment');
    assert.equal(launchSettings(everywhere, everywhere, false).importStrategy, 'useBundled');
  });
});

describe('package.json', () => {
  it('declares limited support of untrusted workspaces, restricting every setting that starts a program', () => {
    const { untrustedWorkspaces, virtualWorkspaces } = MANIFEST.capabilities;
    assert.equal(untrustedWorkspaces.supported, 'limited');
    assert.equal(typeof untrustedWorkspaces.description, 'string');
    assert.deepEqual(
      [...untrustedWorkspaces.restrictedConfigurations].sort(),
      [...USER_ONLY_KEYS, 'importStrategy'].map((key) => `shardls.${key}`).sort(),
    );
    assert.equal(virtualWorkspaces.supported, false);
  });

  it('scopes the settings that name a program or a path to the machine: no workspace can set them', () => {
    for (const key of USER_ONLY_KEYS) {
      assert.equal(PROPERTIES[`shardls.${key}`]?.scope, 'machine', key);
    }
    assert.equal(PROPERTIES['shardls.importStrategy']?.scope, 'machine-overridable');
  });

  it('restarts the server for every setting that changes how it starts', () => {
    for (const key of [...USER_ONLY_KEYS, 'importStrategy']) {
      assert.ok((RESTART_KEYS as readonly string[]).includes(key), key);
    }
  });
});
