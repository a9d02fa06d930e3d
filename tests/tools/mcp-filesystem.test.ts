import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { McpClientPool, parseMcpServers, registerMcpToolsets } from '../../src/tools/mcp/index.js';
import { executeToolCall, type ToolCallOutcome } from '../../src/tools/execute-tool-call.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { filesystemServerScript } from '../fixtures/mcp/fixture.js';

// The server resolves symlinks (macOS /tmp, some CI temp dirs) and checks paths against the real ones.
const root = realpathSync(mkdtempSync(join(tmpdir(), 'traj-mcp-fs-')));
let sandbox: Sandbox;
const pool = new McpClientPool();
const registry = new ToolRegistry();

before(async () => {
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n');
  writeFileSync(join(root, 'docs', 'guide.md'), '# Guide\n');
  sandbox = await createSandbox({ kind: 'local' });
});

after(async () => {
  await pool.closeAll();
  await sandbox.dispose();
  rmSync(root, { recursive: true, force: true });
});

let id = 0;
function call(name: string, args: Record<string, unknown>): Promise<ToolCallOutcome> {
  id++;
  return executeToolCall(
    registry.all(),
    { id: `c${id}`, name, arguments: JSON.stringify(args) },
    { sandbox, signal: new AbortController().signal, state: new Map(), callId: `c${id}`, env: {} },
  );
}

describe('the published @modelcontextprotocol/server-filesystem over stdio', () => {
  test('its tools register as mcp:fs, filtered by include/exclude', async () => {
    const servers = parseMcpServers({
      fs: {
        command: process.execPath,
        args: [filesystemServerScript(), root],
        include: ['list_*', 'read_text_file', 'write_file'],
        exclude: ['list_directory_with_sizes'],
      },
    });
    const registration = await registerMcpToolsets(registry, servers, pool);
    assert.deepEqual(registration.errors, []);
    assert.deepEqual(
      registry
        .all()
        .map((tool) => tool.name)
        .sort(),
      ['mcp_fs_list_allowed_directories', 'mcp_fs_list_directory', 'mcp_fs_read_text_file', 'mcp_fs_write_file'],
    );
    assert.match(registration.catalog[0]!.version, /^secure-filesystem-server@/);
  });

  test('list_directory and read_text_file answer from the temp dir', async () => {
    const listing = await call('mcp_fs_list_directory', { path: root });
    assert.equal(listing.ok, true);
    assert.deepEqual(listing.content.split('\n').sort(), ['[DIR] docs', '[FILE] notes.txt']);
    const read = await call('mcp_fs_read_text_file', { path: join(root, 'notes.txt') });
    assert.deepEqual([read.ok, read.content], [true, 'first line\nsecond line\n']);
  });

  test('write_file changes the real file system', async () => {
    const written = await call('mcp_fs_write_file', { path: join(root, 'docs', 'new.txt'), content: 'made by mcp' });
    assert.equal(written.ok, true, written.content);
    assert.equal(readFileSync(join(root, 'docs', 'new.txt'), 'utf8'), 'made by mcp');
  });

  test('a path outside the allowed directory is an error result the model can read', async () => {
    const outcome = await call('mcp_fs_read_text_file', { path: '/etc/hostname' });
    assert.equal(outcome.ok, false);
    assert.match(
      (JSON.parse(outcome.content) as { error: string }).error,
      /Access denied - path outside allowed directories/,
    );
  });
});
