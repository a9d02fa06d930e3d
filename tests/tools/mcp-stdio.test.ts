import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import {
  attachMcpServers,
  discoverMcpTools,
  McpClientPool,
  mcpToolsFromCatalog,
  parseMcpServers,
  registerMcpToolsets,
} from '../../src/tools/mcp/index.js';
import { ConfigError, TrajError } from '../../src/errors.js';
import { executeToolCall, type ToolCallOutcome } from '../../src/tools/execute-tool-call.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { toolSpec } from '../../src/tools/tool-spec.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { isAlive, stdioFixture } from '../fixtures/mcp/fixture.js';

// `hang` has a short per-call timeout for the timeout test; everything else keeps the default, so
// a slow machine cannot turn an ordinary call into a timeout.
const servers = parseMcpServers({
  test: stdioFixture(),
  hang: stdioFixture({ timeout_ms: 1_000, include: ['slow', 'echo'] }),
});
const testServer = { name: 'test', config: servers.test! };
const hangServer = { name: 'hang', config: servers.hang! };

let sandbox: Sandbox;
let pool: McpClientPool;
let registry: ToolRegistry;
let callCount = 0;

function context(signal = new AbortController().signal): ToolContext {
  return { sandbox, signal, state: new Map(), callId: `call_${callCount}`, env: process.env };
}

async function call(name: string, args: Record<string, unknown> = {}, signal?: AbortSignal): Promise<ToolCallOutcome> {
  callCount++;
  return executeToolCall(
    registry.all(),
    { id: `call_${callCount}`, name, arguments: JSON.stringify(args) },
    context(signal),
  );
}

function errorOf(outcome: ToolCallOutcome): string {
  assert.equal(outcome.ok, false, `expected an error result, got ${outcome.content}`);
  return (JSON.parse(outcome.content) as { error: string }).error;
}

before(async () => {
  sandbox = await createSandbox({ kind: 'local' });
  pool = new McpClientPool();
  registry = new ToolRegistry();
  const registration = await registerMcpToolsets(registry, servers, pool);
  assert.deepEqual(registration.errors, []);
  assert.deepEqual(registration.toolsets, ['mcp:test', 'mcp:hang']);
});

after(async () => {
  await pool.closeAll();
  await sandbox.dispose();
});

describe('an SDK-built MCP server over stdio', () => {
  test('its tools become the toolset mcp:test with sanitised names and the server schema passed through', () => {
    const tools = registry.select(['mcp:test'], { env: {} });
    const names = tools.map((tool) => tool.name);
    assert.deepEqual(names.slice(0, 3), ['mcp_test_echo', 'mcp_test_add', 'mcp_test_stats']);
    assert.ok(names.includes('mcp_test_dotted_name'), `dotted.name sanitised: ${names.join(', ')}`);
    assert.ok(tools.every((tool) => tool.version === 'traj-test-server@1.2.3'));
    assert.deepEqual(
      registry.select(['mcp:hang'], { env: {} }).map((tool) => tool.name),
      ['mcp_hang_echo', 'mcp_hang_slow'],
    );
    const echo = toolSpec(registry.get('mcp_test_echo')!);
    assert.equal(echo.function.description, 'Echo the text back.\nSecond line of the description.');
    assert.deepEqual((echo.function.parameters as { required: string[] }).required, ['text']);
    assert.equal(
      (echo.function.parameters as { properties: Record<string, { type: string }> }).properties.text!.type,
      'string',
    );
  });

  test('text, structured, image and resource results are rendered for the model', async () => {
    const echo = await call('mcp_test_echo', { text: 'hello' });
    assert.equal(echo.ok, true);
    assert.equal(echo.content, 'hello');
    assert.equal(
      (await call('mcp_test_add', { a: 2, b: 40 })).content,
      '{"sum":42}',
      'structured content equal to the text is not repeated',
    );
    assert.equal((await call('mcp_test_stats')).content, 'counted\n{"count":3}');
    assert.equal((await call('mcp_test_image')).content, 'here is a pixel\n[image image/png, 68 bytes]');
    assert.equal(
      (await call('mcp_test_resources')).content,
      '[resource file:///data/report.csv text/csv "report"]\n[resource memo://note]\nnote body',
    );
    assert.equal((await call('mcp_test_dotted_name')).content, 'dotted ok');
  });

  test('an isError result and a schema violation become error results', async () => {
    assert.equal(errorOf(await call('mcp_test_fail', { reason: 'bad input' })), 'failed on purpose: bad input');
    assert.match(errorOf(await call('mcp_test_echo', { text: 5 })), /expected string/);
  });

  test('a call over timeout_ms is an error result; the hung server is stopped and the next call starts a new one', async () => {
    const before = (await pool.processId(hangServer))!;
    assert.ok(isAlive(before));
    const message = errorOf(await call('mcp_hang_slow', { ms: 60_000 }));
    assert.match(
      message,
      /MCP server 'hang' did not answer 'slow' within 1000 ms and was stopped; it starts again on the next call/,
    );
    assert.equal(isAlive(before), false, 'the hung server process is gone');
    assert.equal((await call('mcp_hang_echo', { text: 'back' })).content, 'back');
    const after = await pool.processId(hangServer);
    assert.ok(after !== undefined && after !== before);
  });

  test('a server that crashes mid-call yields an error result with its stderr, and the next call works', async () => {
    const message = errorOf(await call('mcp_test_crash'));
    assert.match(
      message,
      /MCP server 'test' exited while running 'crash' \(stderr: crashing on request\); it starts again on the next call/,
    );
    assert.equal((await call('mcp_test_echo', { text: 'after crash' })).content, 'after crash');
  });

  test('a server killed from outside mid-run yields an error result, and the next call works', async () => {
    const pid = Number((await call('mcp_test_pid')).content);
    assert.equal(await pool.processId(testServer), pid);
    const pending = call('mcp_test_slow', { ms: 30_000 });
    process.kill(pid, 'SIGKILL');
    assert.match(errorOf(await pending), /exited while running 'slow'/);
    assert.equal((await call('mcp_test_echo', { text: 'revived' })).content, 'revived');
    assert.notEqual(await pool.processId(testServer), pid);
  });

  test('concurrent calls share one server process', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, index) => call('mcp_test_add', { a: index, b: 1 })),
    );
    assert.deepEqual(
      outcomes.map((outcome) => outcome.content),
      Array.from({ length: 12 }, (_, index) => `{"sum":${index + 1}}`),
    );
    const pids = new Set(
      (await Promise.all([call('mcp_test_pid'), call('mcp_test_pid')])).map((outcome) => outcome.content),
    );
    assert.equal(pids.size, 1);
  });

  test('an aborted rollout signal cancels the call instead of waiting for it', async () => {
    const controller = new AbortController();
    const pending = call('mcp_test_slow', { ms: 5_000 }, controller.signal);
    setImmediate(() => controller.abort());
    const outcome = await pending;
    assert.equal(errorOf(outcome), '[interrupted]');
    assert.equal((await call('mcp_test_echo', { text: 'still here' })).content, 'still here');
  });
});

describe('stdio server environment', () => {
  test('only the configured env (and PATH, HOME…) reaches the server: secrets of traj stay out', async () => {
    process.env.FOO_API_KEY = 'sk-must-not-leak';
    process.env.TRAJ_MCP_TEST_TOKEN = 'token-passed-on-purpose';
    const envServers = parseMcpServers({
      envtest: stdioFixture({ env: { VISIBLE: 'yes', TOKEN: 'Bearer ${TRAJ_MCP_TEST_TOKEN}' } }),
    });
    const envPool = new McpClientPool();
    const envRegistry = new ToolRegistry();
    try {
      await registerMcpToolsets(envRegistry, envServers, envPool);
      const run = (name: string) => envRegistry.get('mcp_envtest_env')!.run({ name }, context());
      const seen = JSON.parse((await run('FOO_API_KEY')) as string) as { names: string[]; value: string | null };
      assert.equal(seen.value, null);
      assert.ok(!seen.names.includes('FOO_API_KEY'));
      assert.ok(
        seen.names.includes('PATH') && seen.names.includes('VISIBLE') && seen.names.includes('TOKEN'),
        seen.names.join(','),
      );
      const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'VISIBLE', 'TOKEN']);
      assert.deepEqual(
        seen.names.filter((name) => !allowed.has(name)),
        [],
      );
      assert.equal(JSON.parse((await run('TOKEN')) as string).value, 'Bearer token-passed-on-purpose');
    } finally {
      delete process.env.FOO_API_KEY;
      delete process.env.TRAJ_MCP_TEST_TOKEN;
      await envPool.closeAll();
    }
  });

  test('an env value naming an unset variable is a start error naming the field', async () => {
    const envPool = new McpClientPool({ env: {} });
    const { errors } = await discoverMcpTools(
      parseMcpServers({ needs: stdioFixture({ env: { KEY: '${TRAJ_MCP_UNSET_VARIABLE}' } }) }),
      envPool,
    );
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]!.message,
      /mcp_servers\.needs\.env\.KEY refers to \$\{TRAJ_MCP_UNSET_VARIABLE\}, which is not set/,
    );
    assert.deepEqual(envPool.running(), []);
  });
});

describe('registration', () => {
  test('include and exclude filter by exact names and globs', async () => {
    const filterPool = new McpClientPool();
    try {
      const { catalog } = await discoverMcpTools(
        parseMcpServers({ f: stdioFixture({ include: ['e*', 'add'], exclude: ['env'] }) }),
        filterPool,
      );
      assert.deepEqual(
        catalog[0]!.tools.map((tool) => tool.mcpName),
        ['echo', 'add'],
      );
      assert.deepEqual(
        catalog[0]!.tools.map((tool) => tool.name),
        ['mcp_f_echo', 'mcp_f_add'],
      );
    } finally {
      await filterPool.closeAll();
    }
  });

  test('only the servers named in the requested toolsets start; an unconfigured mcp: toolset is reported', async () => {
    const two = parseMcpServers({
      alpha: stdioFixture({ include: ['echo'] }),
      beta: stdioFixture({ include: ['pid'] }),
    });
    const twoPool = new McpClientPool();
    const twoRegistry = new ToolRegistry();
    try {
      const first = await registerMcpToolsets(twoRegistry, two, twoPool, {
        toolsets: ['terminal', 'mcp:alpha', 'mcp:gamma'],
      });
      assert.deepEqual(first.toolsets, ['mcp:alpha']);
      assert.deepEqual(twoPool.running(), ['alpha']);
      assert.equal(first.errors.length, 1);
      assert.equal(first.errors[0]!.toolset, 'mcp:gamma');
      assert.match(
        first.errors[0]!.message,
        /no MCP server 'gamma' is configured under mcp_servers \(configured: alpha, beta\)/,
      );
      const second = await registerMcpToolsets(twoRegistry, two, twoPool, { toolsets: ['mcp:alpha', 'mcp:beta'] });
      assert.deepEqual(second.toolsets, ['mcp:beta']);
      assert.deepEqual(second.errors, []);
      assert.deepEqual(twoRegistry.toolsetNames(), ['mcp:alpha', 'mcp:beta']);
      assert.deepEqual(twoPool.running(), ['alpha', 'beta']);
    } finally {
      await twoPool.closeAll();
    }
    assert.deepEqual(twoPool.running(), []);
  });

  test('tools built from a catalog start their server lazily, on the first call', async () => {
    const only = { test: servers.test! };
    const listing = new McpClientPool();
    const { catalog } = await discoverMcpTools(only, listing);
    await listing.closeAll();
    const worker = new McpClientPool();
    try {
      const tools = mcpToolsFromCatalog(structuredClone(catalog), only, worker);
      assert.equal(tools.length, catalog[0]!.tools.length);
      assert.deepEqual(worker.running(), []);
      const outcome = await executeToolCall(
        tools,
        { id: 'c1', name: 'mcp_test_echo', arguments: '{"text":"lazy"}' },
        context(),
      );
      assert.equal(outcome.content, 'lazy');
      assert.deepEqual(worker.running(), ['test']);
    } finally {
      await worker.closeAll();
    }
  });

  test('a server that cannot start is an error entry with its stderr; its other servers still register', async () => {
    const mixed = parseMcpServers({
      good: stdioFixture({ include: ['echo'] }),
      missing: { command: process.execPath, args: ['/nonexistent/mcp-server.js'] },
      nobinary: { command: '/nonexistent/bin/mcp-server' },
    });
    const mixedPool = new McpClientPool();
    const mixedRegistry = new ToolRegistry();
    try {
      const { toolsets, errors } = await registerMcpToolsets(mixedRegistry, mixed, mixedPool);
      assert.deepEqual(toolsets, ['mcp:good']);
      const byServer = Object.fromEntries(errors.map((error) => [error.server, error.message]));
      assert.match(byServer.missing!, /MCP server 'missing' .* failed to start: .*Cannot find module/s);
      assert.match(byServer.nobinary!, /MCP server 'nobinary' .*failed to start: .*ENOENT/);
    } finally {
      await mixedPool.closeAll();
    }
  });

  test("attachMcpServers (the run pipeline's hook) registers requested mcp: toolsets once and classifies failures", async () => {
    const attachPool = new McpClientPool();
    const attachRegistry = new ToolRegistry();
    const raw = {
      test: stdioFixture({ include: ['pid'] }),
      off: stdioFixture({ include: ['nothing'] }),
      gone: { command: process.execPath, args: ['/nonexistent/mcp-server.js'] },
    };
    try {
      await attachMcpServers(attachRegistry, raw, attachPool, ['terminal', 'mcp:test']);
      assert.deepEqual(
        attachRegistry.all().map((tool) => tool.name),
        ['mcp_test_pid'],
      );
      const pid = await attachPool.processId({ name: 'test', config: parseMcpServers(raw).test! });
      await attachMcpServers(attachRegistry, raw, attachPool, ['mcp:test']);
      assert.equal(
        await attachPool.processId({ name: 'test', config: parseMcpServers(raw).test! }),
        pid,
        'no second start',
      );
      await assert.rejects(
        attachMcpServers(attachRegistry, raw, attachPool, ['mcp:nope']),
        (error: unknown) => error instanceof ConfigError && /no MCP server 'nope' is configured/.test(error.message),
      );
      await assert.rejects(
        attachMcpServers(attachRegistry, raw, attachPool, ['mcp:off']),
        (error: unknown) => error instanceof ConfigError && /offers no tools/.test(error.message),
      );
      await assert.rejects(
        attachMcpServers(attachRegistry, raw, attachPool, ['mcp:gone']),
        (error: unknown) =>
          error instanceof TrajError &&
          !(error instanceof ConfigError) &&
          error.retryable &&
          /mcp:gone: MCP server 'gone' .*failed to start/.test(error.message),
      );
      await assert.rejects(
        attachMcpServers(attachRegistry, { bad: { url: 'nope' } }, attachPool, ['mcp:bad']),
        /mcp_servers: bad\.url: expected the server URL/,
      );
      await assert.rejects(
        attachMcpServers(
          attachRegistry,
          { secret: stdioFixture({ env: { KEY: '${TRAJ_MCP_UNSET_VARIABLE}' } }) },
          attachPool,
          ['mcp:secret'],
        ),
        (error: unknown) =>
          error instanceof ConfigError && /refers to \$\{TRAJ_MCP_UNSET_VARIABLE\}/.test(error.message),
      );
    } finally {
      await attachPool.closeAll();
    }
  });

  test('a tool whose server stopped being startable is an error result, not a crash', async () => {
    const broken = parseMcpServers({ test: { command: process.execPath, args: ['/nonexistent/mcp-server.js'] } });
    const catalogTools = mcpToolsFromCatalog(
      [
        {
          server: 'test',
          toolset: 'mcp:test',
          version: 'x',
          tools: [{ name: 'mcp_test_echo', mcpName: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
        },
      ],
      broken,
      new McpClientPool(),
    );
    const outcome = await executeToolCall(
      catalogTools,
      { id: 'c1', name: 'mcp_test_echo', arguments: '{}' },
      context(),
    );
    assert.match(errorOf(outcome), /MCP server 'test' is not available: .*failed to start/);
  });
});
