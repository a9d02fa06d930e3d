import type { Environment } from '../eval/environment.js';
import { ConfigError } from '../errors.js';
import type { Tool } from '../tools/tool.js';

/** Starts an environment's MCP servers (once per thread) and lists their tools; absent where none can run. */
export type McpToolsFunction = (servers: unknown, where: string) => Promise<Tool[]>;

/**
 * An environment's own tools (its JS tools, then its MCP servers' tools) after the rollout's drawn
 * tools: one list, so they are offered, run, checked and counted like any other. A name taken twice
 * is a configuration error, never a silent shadowing.
 */
export async function withEnvironmentTools(
  drawn: Tool[],
  environment: Environment | undefined,
  mcpTools: McpToolsFunction | undefined,
): Promise<Tool[]> {
  if (!environment?.tools && !environment?.mcpServers) return drawn;
  const own = [...(environment.tools ?? [])];
  if (environment.mcpServers) {
    if (!mcpTools)
      throw new ConfigError(`environment '${environment.name}' starts MCP servers, which this surface cannot run`, {
        code: 'mcp_unavailable',
      });
    own.push(...(await mcpTools(environment.mcpServers, `environment '${environment.name}': mcp_servers`)));
  }
  const names = new Set<string>();
  for (const tool of [...drawn, ...own]) {
    if (names.has(tool.name))
      throw new ConfigError(
        `environment '${environment.name}': a tool named '${tool.name}' is offered twice (rename the environment's tool or drop the toolset that has one)`,
        { code: 'tool_duplicate' },
      );
    names.add(tool.name);
  }
  return [...drawn, ...own];
}
