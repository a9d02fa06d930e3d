import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { buildRoot } from '../../src/util/paths.js';
import { fixtureServerScript } from '../fixtures/mcp/fixture.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'traj-mcp-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function traj(args: string[], home: string): Promise<CliResult> {
  const main = join(buildRoot(), 'src', 'cli', 'main.js');
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], {
      env: { PATH: process.env.PATH, TRAJ_HOME: home },
      cwd: scratch,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function writeConfig(file: string, servers: Record<string, unknown>): string {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, stringify({ mcp_servers: servers }));
  return file;
}

const testServer = { command: process.execPath, args: [fixtureServerScript()] };
const broken = { command: process.execPath, args: [join(scratch, 'no-such-server.js')] };

describe('traj mcp list', () => {
  test('lists home and run-config servers with their tools; a failed server is reported and the exit is 0', async () => {
    const home = join(scratch, 'home-a');
    writeConfig(join(home, 'config.yaml'), { test: { ...testServer, include: ['echo', 'add'] }, gone: broken });
    const runConfig = writeConfig(join(scratch, 'run-a.yaml'), { other: { ...testServer, include: ['dotted.name'] } });
    const result = await traj(['mcp', 'list', '--config', runConfig], home);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^mcp:test {2}traj-test-server@1\.2\.3 {2}\(stdio: .*server\.js\) {2}2 tools\n {2}mcp_test_echo +Echo the text back\.\n {2}mcp_test_add +Add two numbers\.\n/m,
    );
    assert.doesNotMatch(result.stdout, /Second line of the description/);
    assert.match(
      result.stdout,
      /^mcp:gone {2}\(stdio: .*no-such-server\.js\) {2}FAILED\n {2}MCP server 'gone' .*failed to start: the process exited before the MCP handshake finished \(stderr: Error: Cannot find module/m,
    );
    assert.match(
      result.stdout,
      /^mcp:other .* 1 tool\n {2}mcp_other_dotted_name +A name outside the model API alphabet\.$/m,
    );
    assert.match(
      result.stdout,
      new RegExp(`2 servers ok \\(3 tools\\), 1 failed — from ${join(home, 'config.yaml')}, ${runConfig}`),
    );
  });

  test('--json prints the catalog and the failures', async () => {
    const home = join(scratch, 'home-b');
    writeConfig(join(home, 'config.yaml'), { test: { ...testServer, include: ['echo'] }, gone: broken });
    const result = await traj(['mcp', 'list', '--json'], home);
    assert.equal(result.code, 0, result.stderr);
    const parsed = JSON.parse(result.stdout) as {
      servers: Array<{ toolset: string; tools: Array<{ name: string; mcpName: string; inputSchema: unknown }> }>;
      errors: Array<{ server: string }>;
    };
    assert.deepEqual(
      parsed.servers.map((server) => [server.toolset, server.tools.map((tool) => tool.name)]),
      [['mcp:test', ['mcp_test_echo']]],
    );
    assert.equal((parsed.servers[0]!.tools[0]!.inputSchema as { type: string }).type, 'object');
    assert.deepEqual(
      parsed.errors.map((error) => error.server),
      ['gone'],
    );
  });

  test('exit 1 when every configured server fails', async () => {
    const home = join(scratch, 'home-c');
    writeConfig(join(home, 'config.yaml'), { gone: broken });
    const result = await traj(['mcp', 'list'], home);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /0 servers ok \(0 tools\), 1 failed/);
  });

  test('no configured servers is said plainly, exit 0', async () => {
    const result = await traj(['mcp', 'list'], join(scratch, 'home-empty'));
    assert.equal(result.code, 0);
    assert.match(result.stdout, /no MCP servers configured under mcp_servers in .*home-empty\/config\.yaml \(absent\)/);
  });

  test('a config mistake names the file and key (exit 2, like a wrong action is a usage error)', async () => {
    const runConfig = join(scratch, 'bad.yaml');
    writeFileSync(runConfig, 'mcp_servers:\n  x:\n    args: [a]\n');
    const bad = await traj(['mcp', 'list', '--config', runConfig], join(scratch, 'home-empty'));
    assert.equal(bad.code, 2);
    assert.match(
      bad.stderr,
      new RegExp(`${runConfig}: mcp_servers\\.x\\.command: expected a command to start the server`),
    );
    const usage = await traj(['mcp', 'show'], join(scratch, 'home-empty'));
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /traj mcp: expected 'list', got 'show'/);
  });
});
