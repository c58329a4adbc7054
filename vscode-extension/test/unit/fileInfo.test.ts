import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusText, statusTooltip, type FileInfo, type MeshInfo } from '../../src/fileInfo';

const MESH: MeshInfo = {
  name: 'mesh',
  axes: [
    { name: 'data', size: 2 },
    { name: 'model', size: 4 },
  ],
  devices: 8,
  source: 'make_mesh at line 5',
};

function info(meshes: MeshInfo[], count = 8): FileInfo {
  return { meshes, deviceCount: { count, source: 'default device count' } };
}

describe('statusText', () => {
  it('shows the first mesh and its devices', () => {
    assert.equal(statusText(info([MESH])), 'data=2·model=4 (8 dev)');
  });

  it('counts the other meshes', () => {
    assert.equal(statusText(info([MESH, { ...MESH, name: 'other' }])), 'data=2·model=4 (8 dev) +1');
  });

  it('shows a mesh over part of the devices, or of unknown size', () => {
    assert.equal(statusText(info([{ ...MESH, devices: 4 }])), 'data=2·model=4 (4 of 8 dev)');
    assert.equal(statusText(info([{ ...MESH, devices: null }], 6)), 'data=2·model=4 (? of 6 dev)');
  });

  it('shows the assumed device count without a mesh', () => {
    assert.equal(statusText(info([], 16)), '16 dev assumed');
  });
});

describe('statusTooltip', () => {
  it('lists the meshes with their sources and the device count with its source', () => {
    assert.equal(
      statusTooltip(info([MESH, { ...MESH, name: null, source: 'default-mesh from editor settings' }])),
      [
        '**Meshes**',
        '',
        '- `data=2·model=4` (`mesh`): 8 dev, make_mesh at line 5',
        '- `data=2·model=4`: 8 dev, default-mesh from editor settings',
        '',
        '**Devices**: 8 (default device count)',
        '',
        'Click to set the device count to assume for this workspace folder.',
      ].join('\n'),
    );
  });
});
