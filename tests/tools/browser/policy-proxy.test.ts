import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { NetworkPolicySchema } from '../../../src/config/web.js';
import { startPolicyProxy, type ProxyFailure } from '../../../src/tools/browser/policy-proxy.js';

/**
 * The browser's policy proxy spoken to as Chromium does (SOCKS5, no authentication), with a raw
 * client: every address form, refusals and their reasons, relaying, closing. No browser needed.
 */
let target: { url: string; port: number; connections: number; close(): Promise<void> };

before(async () => {
  const server = createServer((_request, response) => response.end('hello from the target'));
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  target = {
    url: `http://127.0.0.1:${port}`,
    port,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
});
after(() => target.close());

/** Bytes from a socket, `count` at a time, whatever the chunking. */
function reader(socket: Socket): (count: number) => Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  socket.on('close', () => waiting?.());
  return async (count) => {
    while (buffered.length < count && !socket.destroyed)
      await new Promise<void>((resolve) => {
        waiting = resolve;
      });
    const taken = buffered.subarray(0, count);
    buffered = buffered.subarray(count);
    return taken;
  };
}

type Address = { domain: string } | { ipv4: string } | { ipv6: number[] };

function addressBytes(address: Address): Buffer {
  if ('domain' in address) return Buffer.concat([Buffer.from([3, address.domain.length]), Buffer.from(address.domain)]);
  if ('ipv4' in address) return Buffer.from([1, ...address.ipv4.split('.').map(Number)]);
  return Buffer.from([4, ...address.ipv6]);
}

/** Greet, ask to CONNECT, and return the proxy's reply code and the open socket. */
async function socksConnect(
  proxyUrl: string,
  address: Address,
  port: number,
): Promise<{ code: number; socket: Socket; read: (count: number) => Promise<Buffer> }> {
  const { hostname, port: proxyPort } = new URL(proxyUrl);
  const socket = connect(Number(proxyPort), hostname);
  socket.on('error', () => undefined);
  const read = reader(socket);
  socket.write(Buffer.from([5, 1, 0]));
  assert.deepEqual([...(await read(2))], [5, 0], 'no authentication accepted');
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), addressBytes(address), portBytes]));
  const reply = await read(10);
  return { code: reply[1]!, socket, read };
}

const LOOPBACK_V6 = [...Array(15).fill(0), 1];

describe('the browser policy proxy (SOCKS5)', () => {
  test('loopback in every address form is refused with the reason, and the target sees no connection', async (t) => {
    const failures: ProxyFailure[] = [];
    const proxy = await startPolicyProxy(NetworkPolicySchema.parse({}), (failure) => failures.push(failure));
    t.after(() => proxy.close());
    const before = target.connections;
    for (const address of [
      { domain: '127.0.0.1' },
      { ipv4: '127.0.0.1' },
      { domain: 'localhost' },
      { ipv6: LOOPBACK_V6 },
    ]) {
      const { code, socket } = await socksConnect(proxy.url, address, target.port);
      assert.equal(code, 2, `${JSON.stringify(address)}: "connection not allowed by ruleset"`);
      socket.destroy();
    }
    assert.equal(target.connections, before);
    assert.deepEqual(
      failures.map(({ host, reason, refused }) => [host, reason.split(';')[0], refused]),
      [
        ['127.0.0.1', '127.0.0.1 is a loopback address (127.0.0.0/8)', true],
        ['127.0.0.1', '127.0.0.1 is a loopback address (127.0.0.0/8)', true],
        ['localhost', 'localhost resolves to 127.0.0.1, a loopback address (127.0.0.0/8)', true],
        ['::1', '::1 is a loopback address (::1/128)', true],
      ],
    );
  });

  test('a listed origin is relayed both ways; its neighbour port and the domain lists are still judged', async (t) => {
    const failures: ProxyFailure[] = [];
    const policy = NetworkPolicySchema.parse({ allow_private_origins: [target.url], deny_domains: ['denied.test'] });
    const proxy = await startPolicyProxy(policy, (failure) => failures.push(failure));
    t.after(() => proxy.close());
    const { code, socket, read } = await socksConnect(proxy.url, { domain: '127.0.0.1' }, target.port);
    assert.equal(code, 0);
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    const answer = await read(10_000);
    assert.match(answer.toString(), /^HTTP\/1\.1 200 OK[\s\S]*hello from the target$/);
    const neighbour = await socksConnect(proxy.url, { domain: '127.0.0.1' }, target.port + 1);
    assert.equal(neighbour.code, 2);
    neighbour.socket.destroy();
    const denied = await socksConnect(proxy.url, { domain: 'denied.test' }, 80);
    assert.equal(denied.code, 2);
    denied.socket.destroy();
    assert.deepEqual(
      failures.map((failure) => failure.reason.split(';')[0]),
      ['127.0.0.1 is a loopback address (127.0.0.0/8)', 'denied.test is in web.deny_domains (denied.test)'],
    );
  });

  test('a closed port is a connection failure, not a policy refusal', async (t) => {
    const failures: ProxyFailure[] = [];
    const proxy = await startPolicyProxy(NetworkPolicySchema.parse({ allow_private: true }), (failure) =>
      failures.push(failure),
    );
    t.after(() => proxy.close());
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const { code, socket } = await socksConnect(proxy.url, { ipv4: '127.0.0.1' }, closed);
    socket.destroy();
    assert.equal(code, 5, '"connection refused"');
    assert.equal(failures.length, 1);
    assert.equal(failures[0]!.refused, false);
    assert.match(failures[0]!.reason, /ECONNREFUSED/);
  });

  test('close() ends the open tunnels', async () => {
    const proxy = await startPolicyProxy(NetworkPolicySchema.parse({ allow_private: true }), () => undefined);
    const { code, socket } = await socksConnect(proxy.url, { domain: '127.0.0.1' }, target.port);
    assert.equal(code, 0);
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await proxy.close();
    await closed;
  });
});
