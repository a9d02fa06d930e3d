import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { checkHomeConfig, homeConfigFile } from '../../config/home-config.js';
import { readConfigFile, validate } from '../../config/load.js';

/** Server names become part of toolset and tool names, so they keep to the model API's alphabet. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;

export const DEFAULT_MCP_TIMEOUT_MS = 60_000;
export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 30_000;

const common = {
  /** Only tools matching one of these (exact names or globs with `*` and `?`) are offered. */
  include: z.array(z.string().min(1)).optional().describe('tool names or globs to offer (default: all)'),
  /** Tools matching one of these are never offered; applied after `include`. */
  exclude: z.array(z.string().min(1)).optional().describe('tool names or globs to hide'),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .default(DEFAULT_MCP_TIMEOUT_MS)
    .describe('per-call timeout; a call over it is an error result and the server is restarted'),
  startup_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(DEFAULT_MCP_STARTUP_TIMEOUT_MS)
    .describe('time to start the server and finish the MCP handshake'),
};

/**
 * `${NAME}` in env values and headers is taken from traj's own environment when the server
 * starts: the only way a secret reaches a server is by being named here.
 */
const interpolated = z.string();

export const McpStdioServerSchema = z.strictObject({
  type: z.literal('stdio'),
  command: z.string({ error: 'expected a command to start the server (or `url` for an HTTP server)' }).min(1),
  args: z.array(z.string()).default([]),
  env: z
    .record(z.string(), interpolated)
    .default({})
    .describe('the whole environment of the server besides PATH, HOME, USER, LOGNAME, SHELL, TERM'),
  cwd: z.string().optional().describe('working directory; relative to the config file'),
  ...common,
});

export const McpHttpServerSchema = z.strictObject({
  /** `http`: Streamable HTTP, falling back to SSE when it cannot connect; `sse`: SSE only. */
  type: z.enum(['http', 'sse']),
  url: z.url({ error: 'expected the server URL, e.g. http://127.0.0.1:8931/mcp' }),
  headers: z.record(z.string(), interpolated).default({}),
  ...common,
});

/** A server entry; `type` is optional and inferred (`url` → http, else stdio). */
export const McpServerSchema = z.preprocess(
  (value) =>
    value && typeof value === 'object' && !Array.isArray(value) && !('type' in value)
      ? { ...value, type: 'url' in value ? 'http' : 'stdio' }
      : value,
  z.discriminatedUnion('type', [McpStdioServerSchema, McpHttpServerSchema]),
);

export const McpServersSchema = z.record(z.string().regex(SERVER_NAME), McpServerSchema, {
  // zod reports a bad record key only as "Invalid key in record"; say what a name may be.
  error: (issue) =>
    issue.code === 'invalid_key'
      ? 'server names use letters, digits, _ and - (at most 40, starting with a letter or digit)'
      : undefined,
});

/** The part of a run config or TRAJ_HOME/config.yaml this room reads; other keys belong to others. */
export const McpConfigFileSchema = z.looseObject({ mcp_servers: McpServersSchema.optional() });

export type McpStdioServer = z.infer<typeof McpStdioServerSchema>;
export type McpHttpServer = z.infer<typeof McpHttpServerSchema>;
export type McpServer = McpStdioServer | McpHttpServer;
export type McpServersConfig = Record<string, McpServer>;
export type McpServersInput = z.input<typeof McpServersSchema>;

/** Validate an `mcp_servers` mapping given in code (tests, environments); `where` names its origin. */
export function parseMcpServers(value: unknown, where = 'mcp_servers'): McpServersConfig {
  return validate(McpServersSchema, value, where) as McpServersConfig;
}

/** Read `mcp_servers` from one YAML/JSON file; relative `cwd` values are resolved against the file. */
export function loadMcpServersFile(file: string, options: { home?: boolean } = {}): McpServersConfig {
  const value = readConfigFile(file);
  // The home file is checked whole here (every command reads it through this function); a run
  // config's other keys are checked by the run config's own schema.
  if (options.home) checkHomeConfig(value, file);
  const parsed = validate(McpConfigFileSchema, value, file);
  const servers = (parsed.mcp_servers ?? {}) as McpServersConfig;
  for (const server of Object.values(servers)) {
    if (server.type === 'stdio' && server.cwd && !isAbsolute(server.cwd))
      server.cwd = resolve(dirname(file), server.cwd);
  }
  return servers;
}

export interface McpServersSource {
  servers: McpServersConfig;
  /** The files read, lowest precedence first. */
  files: string[];
}

/**
 * The servers of TRAJ_HOME/config.yaml (when it exists) overlaid by the run config's: a name in
 * the run config replaces the home entry of the same name as a whole.
 */
export function loadMcpServers(runConfigFile?: string): McpServersSource {
  const files: string[] = [];
  let servers: McpServersConfig = {};
  const home = homeConfigFile();
  if (existsSync(home)) {
    servers = { ...servers, ...loadMcpServersFile(home, { home: true }) };
    files.push(home);
  }
  if (runConfigFile) {
    servers = { ...servers, ...loadMcpServersFile(runConfigFile) };
    files.push(runConfigFile);
  }
  return { servers, files };
}
