import { homeConfigFile } from '../config/home-config.js';
import { ConfigError } from '../errors.js';
import {
  discoverMcpTools,
  loadMcpServers,
  McpClientPool,
  type McpCatalogServer,
  type McpServer,
  type McpServerFailure,
} from '../tools/mcp/index.js';
import { stringOption, type CommandDefinition } from './command.js';
import { loadAgentConfig } from '../run/load-run-config.js';

const DESCRIPTION_WIDTH = 100;

export const command: CommandDefinition = {
  name: 'mcp',
  summary: 'start the configured MCP servers and list the toolsets and tools they offer',
  usage: 'traj mcp list [--config FILE] [--json]',
  allowPositionals: true,
  options: {
    config: {
      type: 'string',
      value: 'FILE',
      description: 'a run config whose mcp_servers overlay those of TRAJ_HOME/config.yaml',
    },
    json: { type: 'boolean', description: 'print the catalog and the failures as JSON' },
  },
  details: [
    'Servers come from `mcp_servers` in TRAJ_HOME/config.yaml (default ~/.traj/config.yaml) and in',
    '--config FILE; a name in FILE replaces the home entry of that name. Each server becomes the',
    'toolset mcp:NAME with tools mcp_NAME_TOOL, usable in --toolsets and in distributions.',
    '',
    'A server that fails to start is reported with its error. The exit status is 1 only when every',
    'configured server failed (0 when at least one answered, or when none is configured).',
    '',
    'examples:',
    '  traj mcp list',
    '  traj mcp list --config run.yaml',
  ].join('\n'),
  async run({ values, positionals }) {
    if (positionals.length !== 1 || positionals[0] !== 'list') {
      throw new ConfigError(`traj mcp: expected 'list', got '${positionals.join(' ')}' (see 'traj mcp --help')`, {
        code: 'cli_usage',
      });
    }
    const file = stringOption(values, 'config');
    // The whole configuration is checked first, so a typo elsewhere in the files is reported too.
    loadAgentConfig(file);
    const { servers, files } = loadMcpServers(file);
    const names = Object.keys(servers);
    if (names.length === 0) {
      const where =
        files.length > 0
          ? files.join(', ')
          : `${homeConfigFile()} (absent)${stringOption(values, 'config') ? '' : ' — pass --config FILE for a run config'}`;
      process.stdout.write(
        values.json
          ? `${JSON.stringify({ files, servers: [], errors: [] }, null, 2)}\n`
          : `no MCP servers configured under mcp_servers in ${where}\n`,
      );
      return 0;
    }
    const pool = new McpClientPool();
    try {
      const { catalog, errors } = await discoverMcpTools(servers, pool);
      if (values.json) process.stdout.write(`${JSON.stringify({ files, servers: catalog, errors }, null, 2)}\n`);
      else {
        process.stdout.write(formatCatalog(names, servers, catalog, errors));
        process.stdout.write(`\n${summary(catalog, errors, files)}\n`);
      }
      return catalog.length === 0 ? 1 : 0;
    } finally {
      await pool.closeAll();
    }
  },
};

function origin(server: McpServer): string {
  if (server.type === 'stdio') return `stdio: ${[server.command, ...server.args].join(' ')}`;
  return `${server.type}: ${server.url}`;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!.trim();
  return line.length > DESCRIPTION_WIDTH ? `${line.slice(0, DESCRIPTION_WIDTH - 1)}…` : line;
}

/** Servers in configuration order, each with its tools or with the error that stopped it. */
function formatCatalog(
  names: string[],
  servers: Record<string, McpServer>,
  catalog: McpCatalogServer[],
  errors: McpServerFailure[],
): string {
  const blocks = names.map((name) => {
    const entry = catalog.find((candidate) => candidate.server === name);
    if (!entry) {
      const failure = errors.find((candidate) => candidate.server === name);
      return `mcp:${name}  (${origin(servers[name]!)})  FAILED\n  ${failure?.message ?? 'unknown error'}\n`;
    }
    const header = `${entry.toolset}  ${entry.version}  (${origin(servers[name]!)})  ${entry.tools.length} tool${entry.tools.length === 1 ? '' : 's'}\n`;
    const width = Math.max(0, ...entry.tools.map((tool) => tool.name.length)) + 2;
    return header + entry.tools.map((tool) => `  ${tool.name.padEnd(width)}${firstLine(tool.description)}\n`).join('');
  });
  return blocks.join('\n');
}

function summary(catalog: McpCatalogServer[], errors: McpServerFailure[], files: string[]): string {
  const tools = catalog.reduce((sum, entry) => sum + entry.tools.length, 0);
  return `${catalog.length} server${catalog.length === 1 ? '' : 's'} ok (${tools} tools), ${errors.length} failed — from ${files.join(', ')}`;
}
