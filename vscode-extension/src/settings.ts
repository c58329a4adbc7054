/**
 * The `shardls.*` settings: those that decide how the server is started, and those the server
 * itself reads (shardls/server/settings.py) through initializationOptions and
 * workspace/configuration. No `vscode` import: the unit tests run in plain Node.
 */

export const SECTION = 'shardls';

/** One `shardls.*` setting of a scope (a workspace folder's, in VS Code), its default when unset. */
export type SettingReader = (key: string) => unknown;

const IMPORT_STRATEGIES = ['useBundled', 'fromEnvironment'] as const;
export type ImportStrategy = (typeof IMPORT_STRATEGIES)[number];

const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LaunchSettings {
  /** The Python to run the server with; '' lets the extension find one. */
  readonly interpreter: string;
  readonly importStrategy: ImportStrategy;
  /** Extra arguments for `shardls serve`. */
  readonly args: readonly string[];
  readonly logLevel: LogLevel;
}

/**
 * Settings that name a program or a path, or pass arguments that may (`--log-file` writes one):
 * only the user's own value counts, never a workspace's. package.json scopes them `machine`,
 * which VS Code enforces; reading the user's value alone holds whatever a settings file says.
 */
export const USER_ONLY_KEYS = ['interpreter', 'args'] as const;

/** Settings that take effect only when the server restarts. */
export const RESTART_KEYS = ['interpreter', 'importStrategy', 'args', 'logLevel'] as const;

/** The keys the server reads, all camelCase as it expects them. */
const SERVER_KEYS = [
  'deviceCount',
  'defaultMesh',
  'select',
  'ignore',
  'dtype',
  'hbmPerDevice',
  'optimizer',
  'inlayHints',
  'typeInlayHints',
] as const;
export type ServerSettings = Partial<Record<(typeof SERVER_KEYS)[number], unknown>>;

/**
 * How to start the server: `user` reads the user's own settings (for USER_ONLY_KEYS), `read`
 * the settings in effect for the folder. In Restricted Mode (`trusted` false) the bundled
 * shardls runs, whatever importStrategy says.
 */
export function launchSettings(read: SettingReader, user: SettingReader, trusted: boolean): LaunchSettings {
  const interpreter = user('interpreter');
  const args = user('args');
  return {
    interpreter: typeof interpreter === 'string' ? interpreter.trim() : '',
    importStrategy: trusted ? oneOf(read('importStrategy'), IMPORT_STRATEGIES, 'useBundled') : 'useBundled',
    args: Array.isArray(args) ? args.filter((arg): arg is string => typeof arg === 'string') : [],
    logLevel: oneOf(read('logLevel'), LOG_LEVELS, 'warning'),
  };
}

/**
 * What the server is sent. A setting left at its empty default (null, '', []) is left out, so
 * that the file's pragmas and `[tool.shardls]` in pyproject.toml apply; anything else is passed
 * on as it is, and the server names what it cannot use in a warning.
 */
export function serverSettings(read: SettingReader): ServerSettings {
  const settings: ServerSettings = {};
  for (const key of SERVER_KEYS) {
    const value = read(key);
    if (!isEmpty(value)) {
      settings[key] = value;
    }
  }
  return settings;
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && value.trim() === '') ||
    (Array.isArray(value) && value.length === 0)
  );
}

/** The value when it is one of `choices`, else the default (package.json's). */
function oneOf<T extends string>(value: unknown, choices: readonly T[], fallback: T): T {
  return choices.find((choice) => choice === value) ?? fallback;
}
