/**
 * `shardls/fileInfo`, the server's answer about a document (shardls/server/features/file_info.py),
 * and how the status bar shows it. No `vscode` import.
 */

export const FILE_INFO = 'shardls/fileInfo';

export interface MeshInfo {
  readonly name: string | null;
  readonly axes: readonly { readonly name: string; readonly size: number }[];
  /** Null while a size is unresolved (a `-1` the device count does not divide). */
  readonly devices: number | null;
  readonly source: string;
}

export interface FileInfo {
  /** The document's own meshes first, then those its arrays use. */
  readonly meshes: readonly MeshInfo[];
  readonly deviceCount: { readonly count: number; readonly source: string };
}

/** `data=2·model=4 (8 dev)`, `+1` when the file has more meshes; `8 dev assumed` without a mesh. */
export function statusText(info: FileInfo): string {
  const [first, ...others] = info.meshes;
  if (first === undefined) {
    return `${String(info.deviceCount.count)} dev assumed`;
  }
  const more = others.length > 0 ? ` +${String(others.length)}` : '';
  return `${axesText(first)} (${devicesText(first, info.deviceCount.count)})${more}`;
}

/** Every mesh with where it comes from, and the device count with where it comes from (Markdown). */
export function statusTooltip(info: FileInfo): string {
  const meshes = info.meshes.map(
    (mesh) =>
      `- \`${axesText(mesh)}\`${mesh.name === null ? '' : ` (\`${mesh.name}\`)`}: ${devicesText(mesh, info.deviceCount.count)}, ${mesh.source}`,
  );
  return [
    ...(meshes.length > 0 ? ['**Meshes**', '', ...meshes, ''] : ['No mesh in this file.', '']),
    `**Devices**: ${String(info.deviceCount.count)} (${info.deviceCount.source})`,
    '',
    'Click to set the device count to assume for this workspace folder.',
  ].join('\n');
}

function axesText(mesh: MeshInfo): string {
  return mesh.axes.map((axis) => `${axis.name}=${String(axis.size)}`).join('·');
}

function devicesText(mesh: MeshInfo, count: number): string {
  if (mesh.devices === null) {
    return `? of ${String(count)} dev`;
  }
  return mesh.devices === count ? `${String(count)} dev` : `${String(mesh.devices)} of ${String(count)} dev`;
}
