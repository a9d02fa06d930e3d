import { ConfigError } from '../errors.js';
import type { AvailabilityContext, Tool, ToolsetLoader } from './tool.js';

/**
 * All tools traj knows in this process, grouped into toolsets. Instances, not a global.
 *
 * A toolset may be declared with a loader: its name is valid at once, and its tools are imported
 * only by `load` (a run that offers `file` never loads the browser's code). Tools are listed in
 * the order their toolsets were declared or first registered, however the loads interleave, so a
 * rollout is offered the same tools in the same order whatever loaded first.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  /** Toolsets whose tools are only known once loaded or once a server starts (MCP); valid names before that. */
  private readonly declared = new Set<string>();
  private readonly loaders = new Map<string, ToolsetLoader>();
  private readonly loading = new Map<string, Promise<void>>();
  private readonly loaded = new Set<string>();
  private readonly ranks = new Map<string, number>();
  private ordered: Tool[] | undefined;

  declareToolset(name: string, load?: ToolsetLoader): this {
    this.declared.add(name);
    this.rankOf(name);
    if (load) this.loaders.set(name, load);
    return this;
  }

  /** Import the tools of the named toolsets that have a loader and are not loaded yet; other names are ignored. */
  async load(toolsets: readonly string[]): Promise<this> {
    await Promise.all(toolsets.map((name) => this.loadOne(name)));
    return this;
  }

  private loadOne(name: string): Promise<void> {
    const load = this.loaders.get(name);
    if (!load) return Promise.resolve();
    let pending = this.loading.get(name);
    if (!pending) {
      pending = load().then((tools) => {
        this.register(...tools);
        this.loaded.add(name);
      });
      // A failed import is not remembered: the next load tries again and reports its own error.
      pending.catch(() => this.loading.delete(name));
      this.loading.set(name, pending);
    }
    return pending;
  }

  register(...tools: Tool[]): this {
    for (const tool of tools) {
      if (this.tools.has(tool.name)) {
        throw new ConfigError(
          `tool '${tool.name}' is registered twice (toolsets '${this.tools.get(tool.name)!.toolset}' and '${tool.toolset}')`,
          {
            code: 'tool_duplicate',
          },
        );
      }
      this.rankOf(tool.toolset);
      this.tools.set(tool.name, tool);
    }
    this.ordered = undefined;
    return this;
  }

  private rankOf(toolset: string): number {
    let rank = this.ranks.get(toolset);
    if (rank === undefined) {
      rank = this.ranks.size;
      this.ranks.set(toolset, rank);
    }
    return rank;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** Every loaded tool, by toolset in declaration order, then in registration order. */
  all(): Tool[] {
    return [...this.listed()];
  }

  /** The order of `all`, kept until the next registration; the lookups below read it without a copy. */
  private listed(): readonly Tool[] {
    this.ordered ??= [...this.tools.values()].sort((a, b) => this.rankOf(a.toolset) - this.rankOf(b.toolset));
    return this.ordered;
  }

  toolsetNames(): string[] {
    return [...new Set([...this.listed().map((tool) => tool.toolset), ...this.declared])].sort();
  }

  hasToolset(name: string): boolean {
    return this.declared.has(name) || this.listed().some((tool) => tool.toolset === name);
  }

  /** Throws a ConfigError listing the known toolsets when a name is unknown. */
  assertToolsets(names: readonly string[], where = 'toolsets'): void {
    const unknown = names.filter((name) => !this.hasToolset(name));
    if (unknown.length > 0) {
      throw new ConfigError(
        `${where}: unknown toolset${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')}; known toolsets: ${this.toolsetNames().join(', ')}`,
        { code: 'toolset_unknown', details: { unknown, known: this.toolsetNames() } },
      );
    }
  }

  /**
   * A toolset asked about before its tools were loaded would look empty (nothing to offer, nothing
   * unavailable): a harness bug, never a run without those tools.
   */
  private assertLoaded(toolsets: readonly string[]): void {
    const unloaded = toolsets.filter((name) => this.loaders.has(name) && !this.loaded.has(name));
    if (unloaded.length > 0)
      throw new Error(`toolsets ${unloaded.join(', ')} are declared but not loaded: await registry.load() first`);
  }

  /** Why a toolset cannot be offered here, or undefined when every tool in it is available. */
  unavailableReason(toolset: string, context: AvailabilityContext): string | undefined {
    this.assertLoaded([toolset]);
    for (const tool of this.listed()) {
      if (tool.toolset !== toolset || !tool.available) continue;
      const verdict = tool.available(context);
      if (verdict !== true) return `${tool.name}: ${verdict}`;
    }
    return undefined;
  }

  /** The tools of the named toolsets that cannot be offered here, each with its reason. */
  unavailableTools(
    toolsets: readonly string[],
    context: AvailabilityContext,
  ): Array<{ name: string; toolset: string; reason: string }> {
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().flatMap((tool) => {
      if (!wanted.has(tool.toolset) || !tool.available) return [];
      const verdict = tool.available(context);
      return verdict === true ? [] : [{ name: tool.name, toolset: tool.toolset, reason: verdict }];
    });
  }

  /** Every tool of the named toolsets, available here or not, in the order `all` lists them. */
  toolsOf(toolsets: readonly string[]): Tool[] {
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().filter((tool) => wanted.has(tool.toolset));
  }

  /** The available tools of the named toolsets, in the order `all` lists them. */
  select(toolsets: readonly string[], context: AvailabilityContext): Tool[] {
    this.assertToolsets(toolsets);
    this.assertLoaded(toolsets);
    const wanted = new Set(toolsets);
    return this.listed().filter((tool) => wanted.has(tool.toolset) && (tool.available?.(context) ?? true) === true);
  }
}
