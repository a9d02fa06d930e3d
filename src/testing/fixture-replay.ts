import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { validate } from '../config/load.js';
import { scriptError, type ChatRequest, type ScriptedResponse, type ScriptFunction } from './script.js';

/**
 * Provider fixtures, kept the way vercel/ai keeps recorded provider responses:
 * `<dir>/<provider>/<case>.json` holds the non-streamed body (or an error body with its status)
 * and what traj must make of it; `<case>.chunks` holds the streamed chunks, one JSON chunk a
 * line (other lines, such as `: comments` or `event:` lines, are sent as they are). Each is
 * marked as recorded (from a public recording, named in `source`) or documented (built from the
 * provider's documented format).
 */
const Origin = z.enum(['recorded', 'documented']);

export const FixtureExpectationSchema = z
  .object({
    content: z.string().nullable().optional(),
    reasoning: z.string().optional().describe('absent: the turn has no reasoning'),
    tool_calls: z
      .array(z.object({ id: z.string().optional(), name: z.string(), arguments: z.unknown() }).strict())
      .optional(),
    finish_reason: z.string().optional(),
    usage: z
      .object({
        prompt_tokens: z.number(),
        completion_tokens: z.number(),
        reasoning_tokens: z.number(),
        cached_tokens: z.number(),
        cost: z.number().nullable(),
      })
      .strict()
      .optional(),
    reasoning_details: z.number().int().optional().describe('how many reasoning_details blocks are kept'),
    signatures: z.array(z.string()).optional().describe('signatures kept in reasoning_details'),
    echo: z.array(z.string()).optional().describe('the fields sent back with this turn (reasoning_echo auto)'),
    images: z.array(z.string()).optional(),
    error: z
      .object({ retryable: z.boolean(), contains: z.string() })
      .strict()
      .optional()
      .describe('the call fails with a ModelError'),
  })
  .strict();

export const ProviderFixtureFileSchema = z
  .object({
    origin: z.union([Origin, z.object({ body: Origin, chunks: Origin }).strict()]),
    source: z.string().min(1).describe('where the recording or the documented format comes from'),
    description: z.string().min(1),
    status: z.number().int().min(200).max(599).default(200),
    content_type: z.string().optional(),
    body: z.unknown().describe('the JSON body, or a string sent as is'),
    expect: FixtureExpectationSchema,
  })
  .strict();

export type FixtureExpectation = z.infer<typeof FixtureExpectationSchema>;

export interface ProviderFixture extends z.infer<typeof ProviderFixtureFileSchema> {
  /** `<provider>/<case>`. */
  id: string;
  provider: string;
  /** The SSE body of `<case>.chunks`, when there is one. */
  stream: string | undefined;
}

export function loadProviderFixtures(directory: string): ProviderFixture[] {
  const fixtures: ProviderFixture[] = [];
  for (const provider of readdirSync(directory).sort()) {
    for (const file of readdirSync(join(directory, provider))
      .filter((name) => name.endsWith('.json'))
      .sort()) {
      const path = join(directory, provider, file);
      const parsed = validate(ProviderFixtureFileSchema, JSON.parse(readFileSync(path, 'utf8')), path);
      const chunks = path.replace(/\.json$/, '.chunks');
      fixtures.push({
        ...parsed,
        id: `${provider}/${file.replace(/\.json$/, '')}`,
        provider,
        stream: existsSync(chunks) ? sseBody(readFileSync(chunks, 'utf8')) : undefined,
      });
    }
  }
  return fixtures;
}

/** JSON lines become `data:` events; `[DONE]` is added when the recording left it out. */
export function sseBody(chunks: string): string {
  const lines = chunks.split(/\r?\n/);
  while (lines.at(-1) === '') lines.pop();
  const events = lines.map((line) => (line.startsWith('{') || line === '[DONE]' ? `data: ${line}\n\n` : `${line}\n`));
  if (!lines.includes('[DONE]')) events.push('data: [DONE]\n\n');
  return events.join('');
}

/** The user message that asks the replay server for a fixture (the model name may say it instead). */
export function replayPrompt(id: string): string {
  return `replay ${id}`;
}

export const FOLLOW_UP_USAGE = { prompt_tokens: 1, completion_tokens: 1, reasoning_tokens: 0 };

/**
 * A script that answers the first turn of a conversation with a fixture, picked by the request's
 * model name or a `replay <provider>/<case>` user message; later turns (after tool results) get a
 * short final answer, so an agent run ends.
 */
export function fixtureReplayScript(fixtures: readonly ProviderFixture[]): ScriptFunction {
  const byId = new Map(fixtures.map((fixture) => [fixture.id, fixture]));
  return (request, { turn }) => {
    const id = fixtureIdOf(request, byId);
    if (!id) return scriptError(`no fixture named by the model or a "replay <provider>/<case>" prompt`);
    if (turn > 0) return { content: `done after ${id}`, usage: FOLLOW_UP_USAGE };
    return fixtureAnswer(byId.get(id)!, request.stream === true);
  };
}

function fixtureIdOf(request: ChatRequest, fixtures: Map<string, ProviderFixture>): string | undefined {
  if (typeof request.model === 'string' && fixtures.has(request.model)) return request.model;
  const user = request.messages.find((message) => message.role === 'user');
  const match = typeof user?.content === 'string' ? /^replay (\S+)$/.exec(user.content.trim()) : null;
  return match && fixtures.has(match[1]!) ? match[1] : undefined;
}

function fixtureAnswer(fixture: ProviderFixture, stream: boolean): ScriptedResponse {
  // A stream may fail after its 200 (an error chunk), so chunks win over an error status.
  if (stream && fixture.stream !== undefined)
    return { fault: 'raw', content_type: 'text/event-stream', body: fixture.stream };
  const body = typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body);
  const contentType = fixture.content_type ?? (typeof fixture.body === 'string' ? 'text/plain' : 'application/json');
  return { fault: 'raw', status: fixture.status, content_type: contentType, body };
}
