import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runAgent } from '../../src/agent/index.js';
import { createModelClient } from '../../src/model/client.js';
import type { ToolMessage } from '../../src/model/messages.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { loadToolRegistry } from '../../src/tools/builtin.js';
import { McpClientPool, parseMcpServers, registerMcpToolsets } from '../../src/tools/mcp/index.js';
import { callTool, callTools, conversationScript, reply, startScriptedServer } from '../../src/testing/index.js';
import { filesystemServerScript, stdioFixture } from '../fixtures/mcp/fixture.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'traj-mcp-agent-')));
after(() => rmSync(root, { recursive: true, force: true }));

test('an agent run against the scripted endpoint calls MCP tools (SDK-built and published servers) and reads their results', async () => {
  writeFileSync(join(root, 'answer.txt'), '42\n');
  // Over the 50,000-char cap on MCP results, under the 100,000-char default for other tools.
  const big = 60_000;
  const server = await startScriptedServer(
    conversationScript([
      callTools([
        { name: 'mcp_test_echo', arguments: { text: 'ping' } },
        { name: 'mcp_fs_read_text_file', arguments: { path: join(root, 'answer.txt') } },
      ]),
      callTool('mcp_test_big', { n: big }),
      callTool('mcp_test_crash'),
      callTool('mcp_test_echo', { text: 'after the crash' }),
      reply('The answer is 42.'),
    ]),
  );
  const pool = new McpClientPool();
  const sandbox = await createSandbox({ kind: 'local' });
  try {
    const registry = await loadToolRegistry();
    const servers = parseMcpServers({
      test: stdioFixture(),
      fs: { command: process.execPath, args: [filesystemServerScript(), root], include: ['read_text_file'] },
    });
    const registration = await registerMcpToolsets(registry, servers, pool, {
      toolsets: ['terminal', 'mcp:test', 'mcp:fs'],
    });
    assert.deepEqual(registration.errors, []);
    const tools = registry.select(['terminal', 'mcp:test', 'mcp:fs'], { env: process.env });

    const result = await runAgent({
      model: createModelClient({ base_url: server.url, model: 'scripted', max_retries: 0 }, { env: {} }),
      tools,
      messages: [
        { role: 'system', content: 'Use the tools.' },
        { role: 'user', content: 'What is in answer.txt?' },
      ],
      sandbox,
      maxTurns: 8,
    });

    assert.equal(result.finishReason, 'stop', JSON.stringify(result.error));
    const offered = server.requests[0]!.tools!.map((tool) => tool.function.name);
    assert.ok(
      offered.includes('terminal') && offered.includes('mcp_test_echo') && offered.includes('mcp_fs_read_text_file'),
      offered.join(', '),
    );
    const echoSpec = server.requests[0]!.tools!.find((tool) => tool.function.name === 'mcp_test_echo')!;
    assert.deepEqual(
      (echoSpec.function.parameters as { required: string[] }).required,
      ['text'],
      'the server schema reaches the model',
    );

    const toolMessages = result.messages.filter((message): message is ToolMessage => message.role === 'tool');
    assert.deepEqual(
      toolMessages.map((message) => message.name),
      ['mcp_test_echo', 'mcp_fs_read_text_file', 'mcp_test_big', 'mcp_test_crash', 'mcp_test_echo'],
    );
    assert.equal(toolMessages[0]!.content, 'ping');
    assert.equal(toolMessages[1]!.content, '42\n');
    assert.match(
      toolMessages[2]!.content,
      new RegExp(`^x{1500}\\n\\n\\[result truncated: ${big} chars in all; the full text is saved at (\\S+) `),
      'MCP results are capped at 50,000 chars',
    );
    const spilled = /saved at (\S+) /.exec(toolMessages[2]!.content)![1]!;
    assert.equal((await sandbox.readFile(spilled)).toString('utf8'), 'x'.repeat(big));
    assert.match(JSON.parse(toolMessages[3]!.content).error, /MCP server 'test' exited while running 'crash'/);
    assert.equal(toolMessages[4]!.content, 'after the crash');
    assert.deepEqual(
      result.toolCalls.map((call) => [call.name, call.ok]),
      [
        ['mcp_test_echo', true],
        ['mcp_fs_read_text_file', true],
        ['mcp_test_big', true],
        ['mcp_test_crash', false],
        ['mcp_test_echo', true],
      ],
    );
    assert.equal(server.requestCount(), 5);
  } finally {
    await pool.closeAll();
    await sandbox.dispose();
    await server.close();
  }
});
