import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * An Atropos API server for tests, written from Atropos' own definitions (NousResearch/atropos,
 * atroposlib/api/server.py): the routes an environment and a trainer use, and the pydantic models
 * of their bodies, transcribed field by field. Stricter than pydantic in one way: a field the
 * model does not define is refused, so a misspelt name cannot pass unnoticed.
 */
const Int = z.number().int();
const Float = z.number();
const Optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();

/** class Registration(BaseModel) */
export const Registration = z.strictObject({
  wandb_group: z.string(),
  wandb_project: z.string(),
  batch_size: Int,
  max_token_len: Int,
  checkpoint_dir: z.string(),
  save_checkpoint_interval: Int,
  starting_step: Int,
  num_steps: Int,
});

/** class RegisterEnv(BaseModel) */
export const RegisterEnv = z.strictObject({
  max_token_length: Int,
  desired_name: z.string(),
  weight: Float,
  group_size: Int,
  min_batch_allocation: Optional(Float),
});

/** class EnvIdentifier(BaseModel) */
export const EnvIdentifier = z.strictObject({ env_id: Int });

/** class ScoredData(BaseModel), with its messages validator (each message has role and content). */
export const ScoredData = z.strictObject({
  tokens: z.array(z.array(Int)),
  masks: z.array(z.array(Int)),
  scores: z.array(Float),
  advantages: Optional(z.array(z.array(Float))),
  ref_logprobs: Optional(z.array(z.array(Float))),
  messages: Optional(
    z.array(
      z.array(
        z.record(z.string(), z.unknown()).refine((message) => 'role' in message && 'content' in message, {
          message: "Message must have 'role' and 'content' fields",
        }),
      ),
    ),
  ),
  generation_params: Optional(z.record(z.string(), z.unknown())),
  inference_logprobs: Optional(z.array(z.array(Float))),
  overrides: Optional(z.array(z.record(z.string(), z.unknown()))),
  group_overrides: Optional(z.record(z.string(), z.unknown())),
  images: z.unknown().optional(),
  env_id: Optional(Int),
  distill_token_ids: Optional(z.array(z.array(z.array(Int)))),
  distill_logprobs: Optional(z.array(z.array(z.array(Float)))),
});
export type ScoredDataBody = z.infer<typeof ScoredData>;

export interface FakeAtropos {
  url: string;
  /** Every request as received: route and body. */
  calls: { route: string; body: unknown }[];
  /** Bodies that failed their model: route and the issues (a 422, as FastAPI answers). */
  invalid: { route: string; issues: string[] }[];
  scored: ScoredDataBody[];
  envs: z.infer<typeof RegisterEnv>[];
  close(): Promise<void>;
}

interface State {
  started: boolean;
  batchSize: number;
  queue: ScoredDataBody[];
}

export async function startFakeAtropos(): Promise<FakeAtropos> {
  const state: State = { started: false, batchSize: -1, queue: [] };
  const fake: Omit<FakeAtropos, 'url' | 'close'> = { calls: [], invalid: [], scored: [], envs: [] };
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const route = `${request.method} ${(request.url ?? '/').split('?')[0]}`;
      fake.calls.push({ route, body });
      handle(route, body, state, fake, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...fake,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function validated<T>(
  schema: z.ZodType<T>,
  route: string,
  body: unknown,
  fake: Omit<FakeAtropos, 'url' | 'close'>,
  response: ServerResponse,
): T | undefined {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  fake.invalid.push({ route, issues });
  send(response, 422, { detail: issues });
  return undefined;
}

function handle(
  route: string,
  body: unknown,
  state: State,
  fake: Omit<FakeAtropos, 'url' | 'close'>,
  response: ServerResponse,
): void {
  if (route === 'POST /register') {
    const registration = validated(Registration, route, body, fake, response);
    if (!registration) return;
    state.batchSize = registration.batch_size;
    return send(response, 200, { uuid: 1 });
  }
  if (route === 'GET /batch') {
    state.started = true;
    const batch: ScoredDataBody[] = [];
    let sequences = 0;
    while (state.queue.length > 0 && sequences < state.batchSize) {
      const group = state.queue.shift()!;
      sequences += group.tokens.length;
      batch.push(group);
    }
    return send(response, 200, { batch: batch.length > 0 ? batch : null });
  }
  if (route === 'POST /register-env') {
    const env = validated(RegisterEnv, route, body, fake, response);
    if (!env) return;
    if (!state.started) return send(response, 200, { status: 'wait for trainer to start' });
    fake.envs.push(env);
    const envId = fake.envs.length - 1;
    return send(response, 200, {
      status: 'success',
      env_id: envId,
      wandb_name: `${env.desired_name}_${envId}`,
      checkpoint_dir: '',
      starting_step: 0,
      checkpoint_interval: 0,
      num_steps: 10,
    });
  }
  if (route === 'GET /status-env') {
    const id = validated(EnvIdentifier, route, body, fake, response);
    if (!id) return;
    const groupSize = fake.envs[id.env_id]?.group_size ?? 1;
    const mine = state.queue.filter((group) => group.env_id === id.env_id);
    const sequences = mine.reduce((sum, group) => sum + group.tokens.length, 0);
    return send(response, 200, {
      current_step: 0,
      queue_size: Math.floor(sequences / groupSize),
      unallocated_fraction: 1,
      self_queue_size: Math.floor(sequences / groupSize),
      max_group_size: groupSize,
      env_weight: 1,
    });
  }
  if (route === 'POST /scored_data') {
    const data = validated(ScoredData, route, body, fake, response);
    if (!data) return;
    fake.scored.push(data);
    state.queue.push(data);
    return send(response, 200, { status: 'received' });
  }
  if (route === 'POST /disconnect-env') {
    if (!validated(EnvIdentifier, route, body, fake, response)) return;
    return send(response, 200, { status: 'success' });
  }
  send(response, 404, { detail: 'Not Found' });
}

function readBody(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      try {
        resolve(text ? JSON.parse(text) : undefined);
      } catch {
        resolve(text);
      }
    });
  });
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
