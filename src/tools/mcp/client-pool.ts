import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../../errors.js';
import { canonicalJson } from '../../util/hash.js';
import { ToolFailure } from '../tool-failure.js';
import type { McpServer } from './config.js';
import {
  CONNECTION_CLOSED,
  connectServer,
  JSON_RPC_PREFIX,
  jsonRpcCode,
  REQUEST_TIMEOUT,
  type McpConnection,
} from './connect.js';

/** A configured server as the pool sees it: its name (for messages) and its settings. */
export interface McpServerRef {
  name: string;
  config: McpServer;
}

export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export interface McpCallOptions {
  signal?: AbortSignal;
}

export interface McpClientPoolOptions {
  /** Where `${NAME}` in env values and headers is looked up (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

interface Slot {
  promise: Promise<McpConnection>;
}

/**
 * The MCP connections of one process (or one worker thread: each builds its own pool). A server
 * starts on first use; one that crashes, hangs past its timeout or drops the connection is
 * stopped and started again by the next call. `closeAll()` when the worker's pool drains.
 */
export class McpClientPool {
  private readonly slots = new Map<string, Slot>();
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: McpClientPoolOptions = {}) {
    this.env = options.env ?? process.env;
  }

  /** Servers with a live (or starting) connection, by name. */
  running(): string[] {
    return [...new Set([...this.slots.keys()].map((key) => key.slice(0, key.indexOf('\0'))))].sort();
  }

  /** The process id of a running stdio server (tests kill it to check recovery). */
  async processId(server: McpServerRef): Promise<number | undefined> {
    const slot = this.slots.get(slotKey(server));
    if (!slot) return undefined;
    const connection = await slot.promise.catch(() => undefined);
    return connection?.pid;
  }

  /** Start the server if needed; startup failures reject with a TrajError naming the server. */
  connect(server: McpServerRef): Promise<McpConnection> {
    const key = slotKey(server);
    const existing = this.slots.get(key);
    if (existing) return existing.promise;
    const slot: Slot = { promise: connectServer(server.name, server.config, this.env) };
    this.slots.set(key, slot);
    slot.promise.then(
      (connection) => {
        connection.onClosed(() => this.forget(key, slot));
      },
      () => this.forget(key, slot),
    );
    return slot.promise;
  }

  /** All tools the server offers (every page). */
  async listTools(server: McpServerRef): Promise<McpToolInfo[]> {
    const connection = await this.connect(server);
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await connection.client.listTools(cursor ? { cursor } : undefined, {
        timeout: server.config.startup_timeout_ms,
      });
      for (const tool of page.tools) {
        tools.push({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema as Record<string, unknown>,
        });
      }
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Call one tool. Everything that goes wrong is a ToolFailure the model reads: the server could
   * not start, the call timed out (server restarted), the server died (restarted), the server
   * rejected the call. Only an abort by the caller's signal propagates as is. An HTTP server that
   * forgot the session (it restarted) never saw the call, so that one is retried in a new session.
   */
  async callTool(
    server: McpServerRef,
    tool: string,
    args: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<CallToolResult | { toolResult: unknown }> {
    for (let attempt = 0; ; attempt++) {
      const connection = await this.connectForCall(server);
      const call = childSignal(options.signal);
      try {
        return await connection.client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: server.config.timeout_ms,
          signal: call.signal,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (attempt === 0 && isSessionLost(error)) {
          await this.discard(server, connection, { kill: true });
          continue;
        }
        throw await this.failure(server, connection, tool, error);
      } finally {
        call.release();
      }
    }
  }

  private async connectForCall(server: McpServerRef): Promise<McpConnection> {
    try {
      return await this.connect(server);
    } catch (error) {
      throw new ToolFailure(
        `MCP server '${server.name}' is not available: ${errorMessage(error)}`,
        'the server will be started again on the next call; use other tools meanwhile',
      );
    }
  }

  /** Turn a failed call into the ToolFailure the model sees, restarting the server when it is at fault. */
  private async failure(
    server: McpServerRef,
    connection: McpConnection,
    tool: string,
    error: unknown,
  ): Promise<ToolFailure> {
    const code = jsonRpcCode(error);
    const restart = 'it starts again on the next call';
    if (code === REQUEST_TIMEOUT) {
      await this.discard(server, connection, { kill: true });
      return new ToolFailure(
        `MCP server '${server.name}' did not answer '${tool}' within ${server.config.timeout_ms} ms and was stopped; ${restart}`,
        'try a smaller request or another approach',
      );
    }
    if (code === CONNECTION_CLOSED || connection.closed) {
      await this.discard(server, connection, { kill: true });
      return new ToolFailure(
        `MCP server '${server.name}' exited while running '${tool}'${connection.describeExit()}; ${restart}`,
      );
    }
    if (code !== undefined) return new ToolFailure(`${tool}: ${errorMessage(error).replace(JSON_RPC_PREFIX, '')}`);
    // Not a JSON-RPC error: the transport itself failed (HTTP error status, refused connection).
    await this.discard(server, connection, { kill: true });
    return new ToolFailure(
      `MCP server '${server.name}' is unreachable (${errorMessage(error)}); the connection was dropped and ${restart}`,
    );
  }

  private forget(key: string, slot: Slot): void {
    if (this.slots.get(key) === slot) this.slots.delete(key);
  }

  private async discard(server: McpServerRef, connection: McpConnection, options: { kill: boolean }): Promise<void> {
    const key = slotKey(server);
    const slot = this.slots.get(key);
    if (slot && (await slot.promise.catch(() => undefined)) === connection) this.slots.delete(key);
    await connection.close(options);
  }

  /** Stop one server (no-op when it is not running). */
  async close(server: McpServerRef): Promise<void> {
    const key = slotKey(server);
    const slot = this.slots.get(key);
    if (!slot) return;
    this.slots.delete(key);
    const connection = await slot.promise.catch(() => undefined);
    await connection?.close({ kill: false });
  }

  /** Stop every server, in parallel; stdio servers get EOF first, then SIGTERM, then SIGKILL. */
  async closeAll(): Promise<void> {
    const slots = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(
      slots.map(async (slot) => {
        const connection = await slot.promise.catch(() => undefined);
        await connection?.close({ kill: false });
      }),
    );
  }
}

/** HTTP 404 to a request carrying a session id: the server no longer knows the session. */
function isSessionLost(error: unknown): boolean {
  return jsonRpcCode(error) === undefined && (error as { code?: unknown }).code === 404;
}

/**
 * A signal of its own for one call: the SDK leaves a listener on the signal it is given, and one
 * rollout's signal serves hundreds of calls.
 */
function childSignal(parent: AbortSignal | undefined): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (!parent) return { signal: controller.signal, release: () => {} };
  const abort = () => controller.abort(parent.reason);
  if (parent.aborted) abort();
  else parent.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', abort) };
}

/** One connection per distinct server configuration, so two runs in one process never share by accident. */
function slotKey(server: McpServerRef): string {
  return `${server.name}\0${canonicalJson(server.config)}`;
}
