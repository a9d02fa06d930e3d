import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { discoverMcpTools, McpClientPool, parseMcpServers, registerMcpToolsets } from '../../src/tools/mcp/index.js';
import { executeToolCall, type ToolCallOutcome } from '../../src/tools/execute-tool-call.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp/fixture.js';

let sandbox: Sandbox;
const started: Array<{ fixture: HttpFixture; pool: McpClientPool }> = [];

before(async () => {
  sandbox = await createSandbox({ kind: 'local' });
});

after(async () => {
  for (const { fixture, pool } of started) {
    await pool.closeAll();
    await fixture.stop();
  }
  await sandbox.dispose();
});

async function connect(mode: '--http' | '--sse', extra: Record<string, unknown> = {}) {
  const fixture = await startHttpFixture(mode);
  const pool = new McpClientPool({ env: { TRAJ_MCP_HTTP_TOKEN: 'sesame' } });
  started.push({ fixture, pool });
  const registry = new ToolRegistry();
  const servers = parseMcpServers({
    web: { url: fixture.url, headers: { Authorization: 'Bearer ${TRAJ_MCP_HTTP_TOKEN}' }, ...extra },
  });
  const registration = await registerMcpToolsets(registry, servers, pool);
  let id = 0;
  const call = (name: string, args: Record<string, unknown> = {}): Promise<ToolCallOutcome> =>
    executeToolCall(
      registry.all(),
      { id: `c${++id}`, name, arguments: JSON.stringify(args) },
      { sandbox, signal: new AbortController().signal, state: new Map(), callId: `c${id}`, env: {} },
    );
  return { fixture, pool, registry, registration, call };
}

function errorOf(outcome: ToolCallOutcome): string {
  assert.equal(outcome.ok, false, `expected an error result, got ${outcome.content}`);
  return (JSON.parse(outcome.content) as { error: string }).error;
}

describe('a Streamable HTTP MCP server on 127.0.0.1', () => {
  test('lists, calls, reports isError, sends the configured headers, and recovers from a timeout', async () => {
    const { registration, registry, call } = await connect('--http', { timeout_ms: 1_000 });
    assert.deepEqual(registration.errors, []);
    assert.deepEqual(registration.toolsets, ['mcp:web']);
    assert.ok(registry.get('mcp_web_echo') && registry.get('mcp_web_header'));
    assert.equal((await call('mcp_web_echo', { text: 'over http' })).content, 'over http');
    assert.equal((await call('mcp_web_add', { a: 1, b: 2 })).content, '{"sum":3}');
    assert.equal((await call('mcp_web_header', { name: 'authorization' })).content, 'Bearer sesame');
    assert.equal(errorOf(await call('mcp_web_fail', { reason: 'http' })), 'failed on purpose: http');
    assert.match(
      errorOf(await call('mcp_web_slow', { ms: 5_000 })),
      /MCP server 'web' did not answer 'slow' within 1000 ms/,
    );
    assert.equal((await call('mcp_web_echo', { text: 'new session' })).content, 'new session');
  });

  test('a server that went away is an error result and the next call after its return works; a restart between calls goes unnoticed', async () => {
    const { fixture, pool, call } = await connect('--http');
    const port = Number(new URL(fixture.url).port);
    assert.equal((await call('mcp_web_echo', { text: 'one' })).content, 'one');
    await fixture.stop();
    assert.match(
      errorOf(await call('mcp_web_echo', { text: 'two' })),
      /MCP server 'web' is unreachable \(.*\); the connection was dropped/,
    );
    assert.deepEqual(pool.running(), [], 'the dead connection was dropped');
    const second = await startHttpFixture('--http', port);
    started.push({ fixture: second, pool });
    assert.equal((await call('mcp_web_echo', { text: 'three' })).content, 'three');
    // Restarted behind the client's back: the server answers 404 to the old session, which never ran the call.
    await second.stop();
    const third = await startHttpFixture('--http', port);
    started.push({ fixture: third, pool });
    const outcome = await call('mcp_web_echo', { text: 'four' });
    assert.deepEqual([outcome.ok, outcome.content], [true, 'four']);
  });
});

describe('the SSE fallback', () => {
  test('a server speaking only the older HTTP+SSE transport is reached after Streamable HTTP fails', async () => {
    const { registration, call } = await connect('--sse');
    assert.deepEqual(registration.errors, []);
    assert.equal((await call('mcp_web_echo', { text: 'over sse' })).content, 'over sse');
    assert.equal((await call('mcp_web_header', { name: 'authorization' })).content, 'Bearer sesame');
  });

  test('an address where nothing speaks MCP is one error naming both transports', async () => {
    const http = createServer((_request, response) => response.writeHead(404).end('nothing here'));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
      const pool = new McpClientPool();
      const { catalog, errors } = await discoverMcpTools(parseMcpServers({ nothing: { url } }), pool);
      assert.deepEqual(catalog, []);
      assert.match(
        errors[0]!.message,
        /MCP server 'nothing' at http:\/\/127\.0\.0\.1:\d+\/mcp is unreachable \(Streamable HTTP: .*; SSE: .*\)/,
      );
      await pool.closeAll();
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
