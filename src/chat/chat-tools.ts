import { ConfigError } from '../errors.js';
import type { ToolSpec } from '../model/messages.js';
import { builtinRegistry } from '../tools/builtin.js';
import { toolSpec } from '../tools/tool-spec.js';
import type { Tool } from '../tools/tool.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolServices } from '../tools/services.js';
import type { CommandApprover } from './approval.js';
import { guardTerminal } from './guarded-terminal.js';

/** MCP's types only; the SDK itself loads when a chat first selects an `mcp:` toolset. */
type McpModule = typeof import('../tools/mcp/index.js');
type McpPool = InstanceType<McpModule['McpClientPool']>;

/**
 * The tools a chat can offer: the built-ins, the MCP servers of the config (started on first
 * use), and — for the local sandbox — the terminal behind the dangerous-command approver.
 */
export class ChatTools {
  readonly registry: ToolRegistry;
  private pool: McpPool | undefined;

  constructor(
    private readonly options: {
      mcpServers?: Record<string, unknown>;
      approver?: CommandApprover;
      env?: NodeJS.ProcessEnv;
      services?: ToolServices;
      /** The terminal's mode (default persistent: one shell for the chat). */
      terminal?: { persistent: boolean };
    } = {},
  ) {
    this.registry = builtinRegistry({ terminal: options.terminal });
    for (const name of Object.keys(options.mcpServers ?? {})) this.registry.declareToolset(`mcp:${name}`);
  }

  /** Settings, auxiliary models and the web cache the chat's tools use. */
  get services(): ToolServices | undefined {
    return this.options.services;
  }

  toolsetNames(): string[] {
    return this.registry.toolsetNames();
  }

  /** The tools of the named toolsets, in registration order; unknown names are a ConfigError. */
  async select(toolsets: readonly string[], where = 'toolsets'): Promise<Tool[]> {
    this.registry.assertToolsets(toolsets, where);
    await this.registry.load(toolsets);
    const missingMcp = toolsets.filter(
      (toolset) => toolset.startsWith('mcp:') && !this.registry.all().some((tool) => tool.toolset === toolset),
    );
    if (missingMcp.length > 0) await this.startMcp(missingMcp);
    const terminal = this.registry.get('terminal');
    const guard = this.options.approver && terminal ? guardTerminal(this.options.approver, terminal) : undefined;
    return this.registry
      .select(toolsets, { env: this.options.env ?? process.env, services: this.options.services })
      .map((tool) => (guard && tool.name === guard.name ? guard : tool));
  }

  /** Tools of the named toolsets that cannot be offered here, with the reason (e.g. no search backend). */
  async unavailable(toolsets: readonly string[]): Promise<Array<{ name: string; toolset: string; reason: string }>> {
    await this.registry.load(toolsets);
    return this.registry.unavailableTools(toolsets, {
      env: this.options.env ?? process.env,
      services: this.options.services,
    });
  }

  async close(): Promise<void> {
    await this.pool?.closeAll();
  }

  private async startMcp(toolsets: string[]): Promise<void> {
    const mcp = await import('../tools/mcp/index.js');
    const servers = mcp.parseMcpServers(this.options.mcpServers ?? {});
    this.pool ??= new mcp.McpClientPool({ env: this.options.env });
    const { errors } = await mcp.registerMcpToolsets(this.registry, servers, this.pool, { toolsets });
    const failed = errors.filter((error) => toolsets.includes(error.toolset));
    if (failed.length > 0) {
      throw new ConfigError(
        `MCP toolsets could not start: ${failed.map((error) => `${error.toolset}: ${error.message}`).join('; ')}`,
        { code: 'mcp_unavailable' },
      );
    }
  }
}

/** Names of tools whose schema differs between two tool lists (added, removed or changed). */
export function changedTools(before: readonly ToolSpec[], after: readonly Tool[]): string[] {
  const now = new Map(after.map((tool) => [tool.name, JSON.stringify(toolSpec(tool))]));
  const then = new Map(before.map((spec) => [spec.function.name, JSON.stringify(spec)]));
  const names = [...new Set([...now.keys(), ...then.keys()])];
  return names.filter((name) => now.get(name) !== then.get(name)).sort();
}
