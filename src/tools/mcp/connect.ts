import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ConfigError, errorMessage, TrajError } from '../../errors.js';
import type { McpHttpServer, McpServer, McpStdioServer } from './config.js';

const CLIENT_INFO = { name: 'traj', version: '0.1.0' };
const STDERR_TAIL_CHARS = 2_000;
/** How long a polite session end (HTTP DELETE) may take before the connection is just dropped. */
const TERMINATE_GRACE_MS = 2_000;

/** A live client for one server, and how to end it. */
export interface McpConnection {
  readonly client: Client;
  /** The stdio server's process id; undefined for HTTP servers. */
  readonly pid: number | undefined;
  /** True once the transport closed (the process exited, the stream ended). */
  readonly closed: boolean;
  onClosed(listener: () => void): void;
  /** " (stderr: …)" with the server's last words, or "" when it said nothing. */
  describeExit(): string;
  /** `kill`: the server is hung or dead, do not wait for it to exit on its own. */
  close(options: { kill: boolean }): Promise<void>;
}

/** Replace `${NAME}` with the variable from traj's environment; an unset one is an error naming the field. */
export function interpolate(
  values: Record<string, string>,
  env: NodeJS.ProcessEnv,
  where: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const found = env[name];
      if (found === undefined) {
        throw new ConfigError(`${where}.${key} refers to \${${name}}, which is not set in traj's environment`, {
          code: 'mcp_env_missing',
        });
      }
      return found;
    });
  }
  return out;
}

/** Start the server (stdio) or open the session (HTTP) and finish the MCP handshake. */
export async function connectServer(name: string, config: McpServer, env: NodeJS.ProcessEnv): Promise<McpConnection> {
  try {
    return config.type === 'stdio' ? await connectStdio(name, config, env) : await connectHttp(name, config, env);
  } catch (error) {
    if (error instanceof TrajError) throw error;
    throw new TrajError(`MCP server '${name}' failed to start: ${errorMessage(error)}`, {
      code: 'mcp_start_failed',
      retryable: true,
      cause: error,
    });
  }
}

async function newClient(): Promise<Client> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  return new Client(CLIENT_INFO, { capabilities: {} });
}

async function connectStdio(name: string, config: McpStdioServer, env: NodeJS.ProcessEnv): Promise<McpConnection> {
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  // The SDK adds only HOME, LOGNAME, PATH, SHELL, TERM and USER from our environment to this.
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: interpolate(config.env, env, `mcp_servers.${name}.env`),
    cwd: config.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
  });
  const client = await newClient();
  try {
    await client.connect(transport, { timeout: config.startup_timeout_ms });
  } catch (error) {
    await transport.close().catch(() => undefined);
    const said = summarizeStderr(stderr);
    const reason = handshakeFailure(error, config.startup_timeout_ms);
    throw new TrajError(
      `MCP server '${name}' (${config.command}) failed to start: ${reason}${said ? ` (stderr: ${said})` : ''}`,
      {
        code: 'mcp_start_failed',
        retryable: true,
        cause: error,
      },
    );
  }
  return liveConnection(client, transport, transport.pid ?? undefined, () => stderr);
}

async function connectHttp(name: string, config: McpHttpServer, env: NodeJS.ProcessEnv): Promise<McpConnection> {
  const requestInit = { headers: interpolate(config.headers, env, `mcp_servers.${name}.headers`) };
  const url = new URL(config.url);
  let streamableError: unknown;
  if (config.type === 'http') {
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const transport = new StreamableHTTPClientTransport(url, { requestInit });
    const client = await newClient();
    try {
      await client.connect(transport, { timeout: config.startup_timeout_ms });
      return liveConnection(client, transport, undefined, () => '');
    } catch (error) {
      await transport.close().catch(() => undefined);
      streamableError = error;
    }
  }
  // Servers from before Streamable HTTP (protocol 2024-11-05) speak SSE: GET an event stream, POST to the endpoint it
  // names.
  const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
  const transport = new SSEClientTransport(url, { requestInit });
  const client = await newClient();
  try {
    await client.connect(transport, { timeout: config.startup_timeout_ms });
  } catch (error) {
    await transport.close().catch(() => undefined);
    const tried =
      streamableError === undefined
        ? `SSE: ${errorMessage(error)}`
        : `Streamable HTTP: ${errorMessage(streamableError)}; SSE: ${errorMessage(error)}`;
    throw new TrajError(`MCP server '${name}' at ${config.url} is unreachable (${tried})`, {
      code: 'mcp_start_failed',
      retryable: true,
      cause: error,
    });
  }
  return liveConnection(client, transport, undefined, () => '');
}

function liveConnection(
  client: Client,
  transport: Transport & { terminateSession?: () => Promise<void> },
  pid: number | undefined,
  stderr: () => string,
): McpConnection {
  let closed = false;
  const listeners: Array<() => void> = [];
  client.onclose = () => {
    closed = true;
    for (const listener of listeners.splice(0)) listener();
  };
  return {
    client,
    pid,
    get closed() {
      return closed;
    },
    onClosed(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
    describeExit() {
      const said = summarizeStderr(stderr());
      return said ? ` (stderr: ${said})` : '';
    },
    async close({ kill }) {
      if (kill && pid !== undefined && !closed) signalProcess(pid);
      if (!kill && transport.terminateSession) await withGrace(transport.terminateSession().catch(() => undefined));
      await client.close().catch(() => undefined);
    },
  };
}

/** The SDK's McpError (a JSON-RPC error from the server or the protocol layer) says "MCP error CODE: …". */
export const JSON_RPC_PREFIX = /^MCP error -?\d+: /;
/** JSON-RPC error codes the SDK uses for a request that timed out / a connection that closed. */
export const REQUEST_TIMEOUT = -32001;
export const CONNECTION_CLOSED = -32000;

/** The JSON-RPC code of an McpError; undefined for transport failures (HTTP status, refused connection). */
export function jsonRpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown }).code;
  return error instanceof Error && typeof code === 'number' && JSON_RPC_PREFIX.test(error.message) ? code : undefined;
}

function handshakeFailure(error: unknown, timeoutMs: number): string {
  const code = jsonRpcCode(error);
  if (code === CONNECTION_CLOSED) return 'the process exited before the MCP handshake finished';
  if (code === REQUEST_TIMEOUT) return `no MCP handshake within ${timeoutMs} ms (startup_timeout_ms)`;
  return errorMessage(error);
}

/**
 * The server's last words in one line: its error lines when it printed any (a stack trace's
 * frames dropped), else its last lines.
 */
export function summarizeStderr(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('at ') && line !== '^');
  const errors = lines.filter((line) => /error|exception|fatal|denied|not found|cannot|failed/i.test(line));
  const chosen = (errors.length > 0 ? errors : lines).slice(-3).join(' | ');
  return chosen.length > 400 ? `…${chosen.slice(-399)}` : chosen;
}

function signalProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone: nothing to stop.
  }
}

async function withGrace(promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, TERMINATE_GRACE_MS)))]);
  clearTimeout(timer);
}
