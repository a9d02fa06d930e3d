import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { ConfigError, isTrajError } from '../errors.js';
import { PolicySchema } from './policy.js';
import type { Serving } from './serving.js';

/** POST /v1/groups: what a trainer asks for. */
export const PullRequestSchema = z.strictObject({
  request_id: z
    .string()
    .min(1)
    .max(200)
    .describe('names this pull: a retried request with the same id gets the same groups, never new ones'),
  count: z.number().int().min(1).max(10_000).describe('groups wanted'),
  policy: PolicySchema.optional().describe('the policy to produce from from now on (a new version or URL)'),
  wait_ms: z.number().int().nonnegative().optional().describe('answer with what is ready after this long'),
});

const MAX_BODY = 1_000_000;

/**
 * The trainer-facing HTTP API of `traj serve` (docs/serve.md):
 * - POST /v1/groups {request_id, count, policy?, wait_ms?} → {groups, policy, stale}
 * - PUT /v1/policy {base_url, model, version, api_key_env?} → {policy}
 * - GET /v1/policy, GET /v1/status
 * A bad body is a 400 naming the field and what was expected; an older policy version a 409.
 */
export function startServeApi(
  serving: Serving,
  options: { host: string; port: number },
): Promise<{
  server: Server;
  url: string;
  close(): Promise<void>;
}> {
  const server = createServer((request, response) => {
    route(serving, request, response).catch((error: unknown) => send(response, 500, { error: String(error) }));
  });
  // Pulls are long polls: a trainer waits as long as its groups take.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new ConfigError(
              `traj serve: port ${options.port} on ${options.host} is in use; pick another with --port N (0: any free port)`,
              { code: 'port_in_use' },
            )
          : error,
      ),
    );
    server.listen(options.port, options.host, () => {
      const address = server.address() as AddressInfo;
      resolve({
        server,
        url: `http://${options.host}:${address.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

async function route(serving: Serving, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  const method = request.method ?? 'GET';
  if (method === 'GET' && path === '/v1/status') return send(response, 200, serving.status());
  if (method === 'GET' && path === '/v1/policy') return send(response, 200, { policy: serving.policy.current });
  if (method === 'PUT' && path === '/v1/policy') {
    const policy = parse(PolicySchema, await readJson(request), response);
    if (policy === undefined) return;
    return answer(response, () => {
      serving.policy.update(policy);
      return { policy: serving.policy.current };
    });
  }
  if (method === 'POST' && path === '/v1/groups') {
    const pull = parse(PullRequestSchema, await readJson(request), response);
    if (pull === undefined) return;
    return answer(response, () => serving.pull(pull));
  }
  send(response, 404, { error: `no route ${method} ${path}: see docs/serve.md` });
}

async function answer(response: ServerResponse, work: () => unknown): Promise<void> {
  try {
    send(response, 200, await work());
  } catch (error) {
    if (isTrajError(error) && error.code === 'policy_version_old')
      return send(response, 409, { error: error.message, code: error.code });
    throw error;
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown, response: ServerResponse): T | undefined {
  if (body instanceof Error) {
    send(response, 400, { error: body.message });
    return undefined;
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`);
  send(response, 400, { error: `invalid request: ${issues.join('; ')}` });
  return undefined;
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > MAX_BODY) request.destroy();
    });
    request.on('end', () => {
      try {
        resolve(JSON.parse(text));
      } catch (error) {
        resolve(new Error(`the body is not JSON: ${(error as Error).message}`));
      }
    });
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.headersSent) return;
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
