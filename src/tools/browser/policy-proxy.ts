import { connect, createServer, isIP, type Socket } from 'node:net';
import {
  addressRefusal,
  domainRefusal,
  endpointKey,
  NetworkPolicyError,
  policyForHost,
  policyLookup,
  urlEndpointKey,
  type NetworkPolicy,
} from '../network/network-policy.js';

/** A running policy proxy (startPolicyProxy). */
export interface PolicyProxy {
  /** socks5://127.0.0.1:PORT, for the context's `proxy.server`. */
  url: string;
  close(): Promise<void>;
}

/** A connection the proxy did not open, as the browser asked for it, and why. */
export interface ProxyFailure {
  host: string;
  port: number;
  /** endpointKey(host, port), as endpointKeyOf gives it for a request's URL. */
  key: string;
  reason: string;
  /** The network policy refused it (else the connection itself failed: refused, no such host). */
  refused: boolean;
}

interface ConnectRequest {
  command: number;
  host: string;
  port: number;
  /** Bytes of the request in the buffer. */
  length: number;
}

const VERSION = 5;
const CONNECT = 1;
const REPLY = { succeeded: 0, failure: 1, notAllowed: 2, hostUnreachable: 4, refused: 5, badCommand: 7 } as const;
const FAILURES: Record<string, number> = { ECONNREFUSED: REPLY.refused, ENOTFOUND: REPLY.hostUnreachable };

/** The key a failure is filed under for the request that meets it (see ProxyFailure). */
export function endpointKeyOf(url: string): string | undefined {
  try {
    return urlEndpointKey(new URL(url));
  } catch {
    return undefined;
  }
}

function reply(code: number): Buffer {
  return Buffer.from([VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

/** Bytes of a complete greeting (version, method count, methods), or undefined while it is incomplete. */
function greetingLength(buffer: Buffer): number | undefined {
  if (buffer.length < 2 || buffer.length < 2 + buffer[1]!) return undefined;
  return 2 + buffer[1]!;
}

/** The address in its canonical form (::1), the one a URL of the request shows. */
function ipv6Text(bytes: Buffer): string {
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) groups.push(bytes.readUInt16BE(index).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.replace(/^\[|\]$/g, '');
}

/** The CONNECT request at the start of the buffer, or undefined while it is incomplete. */
function parseRequest(buffer: Buffer): ConnectRequest | undefined {
  if (buffer.length < 5) return undefined;
  const type = buffer[3];
  const hostEnd = type === 1 ? 8 : type === 4 ? 20 : 5 + buffer[4]!;
  if (buffer.length < hostEnd + 2) return undefined;
  const host =
    type === 1
      ? [...buffer.subarray(4, 8)].join('.')
      : type === 4
        ? ipv6Text(buffer.subarray(4, 20))
        : buffer.subarray(5, hostEnd).toString('latin1');
  return { command: buffer[1]!, host, port: buffer.readUInt16BE(hostEnd), length: hostEnd + 2 };
}

/**
 * A SOCKS5 proxy on 127.0.0.1 for one browser context, applying the network policy to every
 * connection Chromium opens for it. Playwright's route sees only the first request of a redirect
 * chain (it continues the later hops itself, unrouted), so a page could redirect the browser into
 * an internal service; through the proxy every hop, subresource and WebSocket is judged, on the
 * address actually connected to. SOCKS rather than HTTP: one code path for http, https and ws,
 * and the host name arrives unresolved (Chromium's SOCKS5 leaves resolving to the proxy).
 */
export async function startPolicyProxy(
  policy: NetworkPolicy,
  onFailure: (failure: ProxyFailure) => void,
): Promise<PolicyProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    handshake(client, (request, rest) => open(client, request, rest, { policy, onFailure, track }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  return {
    url: `socks5://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Greeting (no authentication), then the CONNECT request; anything else ends the connection. */
function handshake(client: Socket, onRequest: (request: ConnectRequest, rest: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  let greeted = false;
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (buffered[0] !== VERSION) return void client.destroy();
    if (!greeted) {
      const length = greetingLength(buffered);
      if (length === undefined) return;
      buffered = buffered.subarray(length);
      greeted = true;
      client.write(Buffer.from([VERSION, 0]));
      if (buffered.length === 0) return;
    }
    const request = parseRequest(buffered);
    if (!request) return;
    client.off('data', onData);
    // Held until the tunnel is up: a flowing socket without a listener drops what arrives.
    client.pause();
    if (request.command !== CONNECT) return void client.end(reply(REPLY.badCommand));
    onRequest(request, buffered.subarray(request.length));
  };
  client.on('data', onData);
}

interface ProxyContext {
  policy: NetworkPolicy;
  onFailure: (failure: ProxyFailure) => void;
  track: (socket: Socket) => void;
}

function open(client: Socket, request: ConnectRequest, rest: Buffer, context: ProxyContext): void {
  const host = request.host.replace(/^\[|\]$/g, '');
  const hostPolicy = policyForHost(host, request.port, context.policy);
  const fail = (reason: string, refused: boolean, code: number) => {
    context.onFailure({ host, port: request.port, key: endpointKey(host, request.port), reason, refused });
    client.end(reply(code));
  };
  const refuse = (reason: string) => fail(reason, true, REPLY.notAllowed);
  const early = domainRefusal(host, context.policy) ?? (isIP(host) ? addressRefusal(host, hostPolicy) : undefined);
  if (early) return refuse(early);
  // A literal address skips `lookup`; it was judged just above.
  const upstream = connect({ host, port: request.port, lookup: policyLookup(hostPolicy) });
  context.track(upstream);
  client.once('close', () => upstream.destroy());
  const failed = (error: NodeJS.ErrnoException) => {
    if (error instanceof NetworkPolicyError) return refuse(error.reason);
    fail(error.message, false, FAILURES[error.code ?? ''] ?? REPLY.failure);
  };
  upstream.once('error', failed);
  upstream.once('connect', () => {
    upstream.off('error', failed);
    upstream.once('close', () => client.destroy());
    client.write(reply(REPLY.succeeded));
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream).pipe(client);
  });
}
