import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { launchSettings, serverSettings, type SettingReader } from '../../src/settings';

/** The `shardls.*` settings' defaults as package.json declares them, without the prefix. */
const DEFAULTS: Record<string, unknown> = Object.fromEntries(
  Object.entries(
    (
      JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, { default: unknown }> } };
      }
    ).contributes.configuration.properties,
  ).map(([key, property]) => [key.replace(/^shardls\./, ''), property.default]),
);

/** The settings' defaults, overridden by `values`. */
function reader(values: Record<string, unknown> = {}): SettingReader {
  return (key) => (key in values ? values[key] : DEFAULTS[key]);
}

describe('serverSettings', () => {
  it('leaves settings at their empty defaults out, so that pyproject.toml applies', () => {
    assert.deepEqual(serverSettings(reader()), { inlayHints: true });
    assert.deepEqual(serverSettings(reader({ defaultMesh: '  ', inlayHints: false })), { inlayHints: false });
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
    });
  });

  it('passes values of the wrong type on, for the server to name in a warning', () => {
    assert.deepEqual(serverSettings(reader({ deviceCount: 'many' })), { deviceCount: 'many', inlayHints: true });
  });

  it('never sends the settings that only the extension reads', () => {
    const settings = serverSettings(reader({ interpreter: '/usr/bin/python3', args: ['--tcp'], logLevel: 'debug' }));
    assert.deepEqual(Object.keys(settings), ['inlayHints']);
  });
});

describe('launchSettings', () => {
  it('reads the defaults', () => {
    assert.deepEqual(launchSettings(reader()), {
      interpreter: '',
      importStrategy: 'useBundled',
      args: [],
      logLevel: 'warning',
    });
  });

  it('keeps valid values and replaces invalid ones with the defaults', () => {
    assert.deepEqual(
      launchSettings(
        reader({
          interpreter: ' /opt/py/bin/python ',
          importStrategy: 'fromEnvironment',
          args: ['--log-file', 3, 'x.log'],
          logLevel: 'debug',
        }),
      ),
      {
        interpreter: '/opt/py/bin/python',
        importStrategy: 'fromEnvironment',
        args: ['--log-file', 'x.log'],
        logLevel: 'debug',
      },
    );
    assert.deepEqual(
      launchSettings(reader({ interpreter: 3, importStrategy: 'pip', args: '--tcp', logLevel: 'loud' })),
      {
        interpreter: '',
        importStrategy: 'useBundled',
        args: [],
        logLevel: 'warning',
      },
    );
  });
});
