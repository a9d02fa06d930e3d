import { sha256 } from '../../util/hash.js';

/** What OpenAI-compatible APIs accept as a function name. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME = 64;
const HASH_LENGTH = 8;

export function mcpToolset(server: string): string {
  return `mcp:${server}`;
}

/** The server named by an `mcp:NAME` toolset, or undefined for other toolsets. */
export function serverOfToolset(toolset: string): string | undefined {
  return toolset.startsWith('mcp:') ? toolset.slice(4) : undefined;
}

/**
 * `mcp_SERVER_TOOL` with every character outside the API's alphabet replaced by `_`; a name over
 * 64 characters keeps its start and ends in a hash of the full name, so it stays unique and stable.
 */
export function mcpToolName(server: string, tool: string): string {
  const full = `mcp_${server}_${tool}`;
  const safe = full.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (safe.length <= MAX_NAME) return safe;
  return `${safe.slice(0, MAX_NAME - HASH_LENGTH - 1)}_${sha256(full).slice(0, HASH_LENGTH)}`;
}

/** Like mcpToolName, but a sanitised name already taken (e.g. `a.b` next to `a_b`) gets a hash suffix. */
export function uniqueMcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const name = mcpToolName(server, tool);
  if (!taken.has(name)) return name;
  const suffix = `_${sha256(`${server}\0${tool}`).slice(0, HASH_LENGTH)}`;
  return `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** True when `name` equals one of the patterns or matches it as a glob (`*`, `?`). */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => pattern === name || globToRegExp(pattern).test(name));
}

/** Apply a server's include list (when given), then its exclude list, to the MCP tool names. */
export function isToolWanted(
  tool: string,
  filters: { include?: readonly string[]; exclude?: readonly string[] },
): boolean {
  if (filters.include && !matchesAny(tool, filters.include)) return false;
  return !(filters.exclude && matchesAny(tool, filters.exclude));
}
