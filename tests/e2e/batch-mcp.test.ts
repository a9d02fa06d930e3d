import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { startScriptedServer, callTool, reply, type ScriptFunction } from '../../src/testing/index.js';
import type { TrajectoryRecord } from '../../src/trajectory/record.js';
import { runCli, temporaryDirectory } from '../helpers/cli.js';
import { stdioFixture } from '../fixtures/mcp/fixture.js';

/** Calls the MCP echo tool when it is offered, then answers with what came back. */
const mcpScript: ScriptFunction = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return reply(`echoed: ${String(last.content)}`);
  const offersEcho = request.tools?.some((tool) => tool.function?.name === 'mcp_test_echo');
  return offersEcho ? callTool('mcp_test_echo', { text: 'hello over MCP' }) : reply('no MCP tools this time');
};

test('traj batch with a distribution including mcp:NAME runs the MCP tools in workers and records their stats', async (t) => {
  const directory = temporaryDirectory(t);
  const server = await startScriptedServer(mcpScript);
  t.after(() => server.close());
  const config = join(directory, 'run.yaml');
  writeFileSync(config, stringify({ mcp_servers: { test: stdioFixture({ include: ['echo', 'add'] }) } }));
  const distribution = join(directory, 'with-mcp.yaml');
  writeFileSync(
    distribution,
    stringify({
      name: 'with-mcp',
      description: 'MCP test server plus files',
      toolsets: { 'mcp:test': 1.0, file: 0.5 },
    }),
  );
  const dataset = join(directory, 'prompts.jsonl');
  writeFileSync(
    dataset,
    `${Array.from({ length: 8 }, (_, index) => JSON.stringify({ prompt: `use the echo tool ${index}` })).join('\n')}\n`,
  );
  const result = await runCli(
    [
      'batch',
      '--config',
      config,
      '--dataset',
      dataset,
      '--run',
      'mcp',
      '--distribution',
      distribution,
      '--concurrency',
      '4',
      '--base-url',
      server.url,
      '--model',
      'm',
      '--api-key-env',
      'NO_KEY',
    ],
    { cwd: directory },
  );
  assert.equal(result.code, 0, result.stderr);
  const records = readFileSync(join(directory, 'datasets', 'mcp', 'trajectories.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TrajectoryRecord);
  assert.equal(records.length, 8);
  for (const record of records) {
    assert.ok(record.toolsets.includes('mcp:test'));
    assert.deepEqual(
      record.tools
        .filter((tool) => tool.function.name.startsWith('mcp_'))
        .map((tool) => tool.function.name)
        .sort(),
      ['mcp_test_add', 'mcp_test_echo'],
    );
    assert.deepEqual(record.tool_stats, [{ name: 'mcp_test_echo', calls: 1, ok: 1, errors: 0 }]);
    assert.match(record.messages.find((message) => message.role === 'tool')!.content as string, /hello over MCP/);
  }
  const stats = JSON.parse(readFileSync(join(directory, 'datasets', 'mcp', 'statistics.json'), 'utf8'));
  assert.deepEqual(stats.tools, [{ name: 'mcp_test_echo', calls: 8, ok: 8, errors: 0, error_rate: 0 }]);
  assert.ok(stats.by_toolsets.every((row: { toolsets: string[] }) => row.toolsets.includes('mcp:test')));
});
