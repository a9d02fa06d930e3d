import { ConfigError, errorMessage, isTrajError, TrajError } from '../../errors.js';
import type { JsonSchemaTool, Tool } from '../tool.js';
import type { ToolRegistry } from '../registry.js';
import type { McpClientPool, McpToolInfo } from './client-pool.js';
import { parseMcpServers, type McpServersConfig } from './config.js';
import { isToolWanted, mcpToolset, serverOfToolset, uniqueMcpToolName } from './names.js';
import { toolOutputOf } from './result.js';
import { canonicalJson } from '../../util/hash.js';

/** One offered MCP tool: plain JSON, so a catalog listed once can be sent to worker threads. */
export interface McpCatalogTool {
  /** The name the model calls (`mcp_SERVER_TOOL`, sanitised). */
  name: string;
  /** The name the server knows. */
  mcpName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface McpCatalogServer {
  server: string;
  toolset: string;
  /** The server's name@version from the handshake; part of the run fingerprint through the tools. */
  version: string;
  tools: McpCatalogTool[];
}

export interface McpServerFailure {
  server: string;
  toolset: string;
  message: string;
  /** True when trying again may help (the server failed to start); false for configuration mistakes. */
  retryable: boolean;
}

export interface McpDiscovery {
  catalog: McpCatalogServer[];
  errors: McpServerFailure[];
}

/**
 * The configured servers the requested toolsets name (`mcp:NAME`), or all of them when no toolsets
 * are given. An `mcp:NAME` without a configured server is reported, not thrown.
 */
export function selectServers(
  servers: McpServersConfig,
  toolsets?: readonly string[],
): { names: string[]; errors: McpServerFailure[] } {
  if (!toolsets) return { names: Object.keys(servers), errors: [] };
  const names: string[] = [];
  const errors: McpServerFailure[] = [];
  for (const toolset of toolsets) {
    const server = serverOfToolset(toolset);
    if (server === undefined || names.includes(server)) continue;
    if (server in servers) names.push(server);
    else {
      const known = Object.keys(servers).join(', ') || '(none)';
      errors.push({
        server,
        toolset,
        message: `no MCP server '${server}' is configured under mcp_servers (configured: ${known})`,
        retryable: false,
      });
    }
  }
  return { names, errors };
}

function catalogTools(
  server: string,
  tools: McpToolInfo[],
  filters: { include?: string[]; exclude?: string[] },
): McpCatalogTool[] {
  const taken = new Set<string>();
  const out: McpCatalogTool[] = [];
  for (const tool of tools) {
    if (!isToolWanted(tool.name, filters)) continue;
    const name = uniqueMcpToolName(server, tool.name, taken);
    taken.add(name);
    const description = tool.description?.trim() || tool.title || `${tool.name} (from MCP server ${server})`;
    out.push({ name, mcpName: tool.name, description, inputSchema: tool.inputSchema });
  }
  return out;
}

/** Start the servers (all, or those the toolsets name) in parallel and list their filtered tools. */
export async function discoverMcpTools(
  servers: McpServersConfig,
  pool: McpClientPool,
  options: { toolsets?: readonly string[] } = {},
): Promise<McpDiscovery> {
  const selection = selectServers(servers, options.toolsets);
  const results = await Promise.all(
    selection.names.map(async (server): Promise<McpCatalogServer | McpServerFailure> => {
      const config = servers[server]!;
      try {
        const tools = await pool.listTools({ name: server, config });
        const connection = await pool.connect({ name: server, config });
        const info = connection.client.getServerVersion();
        return {
          server,
          toolset: mcpToolset(server),
          version: info ? `${info.name}@${info.version}` : 'unknown',
          tools: catalogTools(server, tools, config),
        };
      } catch (error) {
        return {
          server,
          toolset: mcpToolset(server),
          message: errorMessage(error),
          retryable: isTrajError(error) ? error.retryable : true,
        };
      }
    }),
  );
  return {
    catalog: results.filter((result): result is McpCatalogServer => 'tools' in result),
    errors: [...selection.errors, ...results.filter((result): result is McpServerFailure => 'message' in result)],
  };
}

/** Tools that call the catalog's servers through the pool; servers start on the first call. */
export function mcpToolsFromCatalog(
  catalog: readonly McpCatalogServer[],
  servers: McpServersConfig,
  pool: McpClientPool,
): Tool[] {
  return catalog.flatMap((entry) => {
    const config = servers[entry.server];
    if (!config) return [];
    const ref = { name: entry.server, config };
    return entry.tools.map(
      (tool): JsonSchemaTool => ({
        name: tool.name,
        toolset: entry.toolset,
        description: tool.description,
        version: entry.version,
        inputSchema: tool.inputSchema,
        run: async (args, context) =>
          toolOutputOf(await pool.callTool(ref, tool.mcpName, args, { signal: context.signal }), tool.name),
      }),
    );
  });
}

/** Registered tools, not just a declared name (the main thread declares `mcp:NAME` without starting servers). */
function hasTools(registry: ToolRegistry, toolset: string): boolean {
  return registry.all().some((tool) => tool.toolset === toolset);
}

export interface McpRegistration {
  /** The `mcp:NAME` toolsets now in the registry. */
  toolsets: string[];
  catalog: McpCatalogServer[];
  errors: McpServerFailure[];
}

/**
 * List the configured servers' tools (starting them) and register them as `mcp:NAME` toolsets.
 * With `toolsets`, only the servers those name are started. A toolset already registered is
 * left as it is, so calling this again for more toolsets is safe.
 */
export async function registerMcpToolsets(
  registry: ToolRegistry,
  servers: McpServersConfig,
  pool: McpClientPool,
  options: { toolsets?: readonly string[] } = {},
): Promise<McpRegistration> {
  const wanted = options.toolsets?.filter((toolset) => !hasTools(registry, toolset));
  const { catalog, errors } = await discoverMcpTools(servers, pool, { toolsets: wanted });
  // Checked again after the await: a concurrent registration may have won the race.
  const fresh = catalog.filter((entry) => !hasTools(registry, entry.toolset));
  registry.register(...mcpToolsFromCatalog(fresh, servers, pool));
  const toolsets = catalog.map((entry) => entry.toolset).filter((toolset) => hasTools(registry, toolset));
  for (const entry of catalog.filter((candidate) => candidate.tools.length === 0)) {
    errors.push({
      server: entry.server,
      toolset: entry.toolset,
      message: `MCP server '${entry.server}' offers no tools (after include/exclude)`,
      retryable: false,
    });
  }
  return { toolsets, catalog, errors };
}

/**
 * For the run pipeline (one registry and one pool per worker thread): make sure the `mcp:NAME`
 * toolsets a rollout asks for are registered, starting only their servers, once. `servers` is
 * the `mcp_servers` value of a run config, validated here. A toolset naming no configured server,
 * one left without tools by include/exclude or an unset `${NAME}` is a ConfigError; a server that
 * cannot start is a retryable TrajError, so the rollout counts as an infrastructure failure and
 * is retried instead of running without its tools.
 */
export async function attachMcpServers(
  registry: ToolRegistry,
  servers: unknown,
  pool: McpClientPool,
  toolsets: readonly string[],
): Promise<void> {
  const missing = toolsets.filter((toolset) => serverOfToolset(toolset) !== undefined && !hasTools(registry, toolset));
  if (missing.length === 0) return;
  const config = parseMcpServers(servers ?? {});
  const { errors } = await registerMcpToolsets(registry, config, pool, { toolsets: missing });
  if (errors.length === 0) return;
  const message = errors.map((error) => `${error.toolset}: ${error.message}`).join('; ');
  if (errors.some((error) => error.retryable))
    throw new TrajError(message, { code: 'mcp_unavailable', retryable: true });
  throw new ConfigError(message, { code: 'mcp_toolset_invalid' });
}

/** Per pool: the tools of each environment's servers, listed once (keyed by their configuration). */
const environmentCatalogs = new WeakMap<McpClientPool, Map<string, Promise<Tool[]>>>();

/**
 * The tools of every server in an environment's `mcp_servers` (started once per pool): offered to
 * the environment's rollouts beside their drawn toolsets. A server that cannot start is a
 * retryable fault (the rollout is retried, never run without its tools); a configuration
 * mistake is a ConfigError.
 */
export function environmentMcpTools(servers: McpServersConfig, pool: McpClientPool): Promise<Tool[]> {
  let catalogs = environmentCatalogs.get(pool);
  if (!catalogs) {
    catalogs = new Map();
    environmentCatalogs.set(pool, catalogs);
  }
  const key = canonicalJson(servers);
  let tools = catalogs.get(key);
  if (!tools) {
    tools = discoverMcpTools(servers, pool).then(({ catalog, errors }) => {
      if (errors.length > 0) {
        const message = errors.map((error) => `${error.toolset}: ${error.message}`).join('; ');
        if (errors.some((error) => error.retryable))
          throw new TrajError(message, { code: 'mcp_unavailable', retryable: true });
        throw new ConfigError(message, { code: 'mcp_toolset_invalid' });
      }
      return mcpToolsFromCatalog(catalog, servers, pool);
    });
    // A failed start is not remembered: the next rollout tries again.
    tools.catch(() => catalogs.delete(key));
    catalogs.set(key, tools);
  }
  return tools;
}
