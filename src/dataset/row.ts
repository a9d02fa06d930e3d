import { z } from 'zod';
import type { Message } from '../model/messages.js';
import { checkPrefix } from './conversation-prefix.js';
import { messagesFromOpenAI, OpenAIMessageSchema } from './openai-messages.js';
import { messagesFromShareGpt, ShareGptTurnSchema } from './sharegpt.js';

/**
 * One dataset row as a user writes it. `prompt`, `messages` (OpenAI shape) or `conversations`
 * (ShareGPT shape) holds the conversation prefix; every field not named here is carried through
 * to the record as pass-through metadata.
 */
export const DatasetRowSchema = z.looseObject({
  prompt: z.string().min(1, 'must not be empty').optional(),
  messages: z.array(OpenAIMessageSchema).min(1, 'must hold at least one message').optional(),
  conversations: z.array(ShareGptTurnSchema).min(1, 'must hold at least one turn').optional(),
  id: z
    .union([z.string().min(1, 'must not be empty'), z.number().finite()])
    .transform(String)
    .optional(),
  system: z.string().optional(),
  image: z.string().min(1, 'must not be empty').optional(),
  cwd: z.string().min(1, 'must not be empty').optional(),
});
export type DatasetRow = z.infer<typeof DatasetRowSchema>;

const KNOWN_FIELDS = new Set(['prompt', 'messages', 'conversations', 'id', 'system', 'image', 'cwd']);
const PREFIX_FIELDS = ['prompt', 'messages', 'conversations'] as const;

/** A row ready to run: the conversation prefix as OpenAI messages, the system prompt apart. */
export interface DatasetItem {
  /** 0-based position among the data rows (blank lines do not count; bad rows do). */
  index: number;
  /** 1-based line number in a JSONL file; the 1-based row number in Parquet/Arrow. */
  line: number;
  id?: string;
  /** user/assistant/tool messages; never a system message (that is `system`). */
  messages: Message[];
  system?: string;
  /** Sandbox image for this row. */
  image?: string;
  /** Working directory inside the sandbox for this row. */
  cwd?: string;
  /** Every other field of the row, untouched. */
  fields: Record<string, unknown>;
}

/** Yielded instead of throwing when the reader skips bad rows, so the caller can count them. */
export interface BadRow {
  bad: true;
  index: number;
  line: number;
  reason: string;
}

export function isBadRow(value: DatasetItem | BadRow): value is BadRow {
  return (value as BadRow).bad === true;
}

export type NormalisedRow = { item: DatasetItem } | { reason: string };

/** Validate one raw row and turn it into a DatasetItem, or say precisely why it is unusable. */
export function normaliseRow(raw: unknown, position: { index: number; line: number }): NormalisedRow {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { reason: `expected a JSON object, got ${describeType(raw)}` };
  }
  const present = withoutNulls(raw as Record<string, unknown>);
  const prefixFields = PREFIX_FIELDS.filter((field) => field in present);
  if (prefixFields.length === 0) {
    const keys = Object.keys(present);
    return {
      reason: `expected "prompt" (string) or "messages"/"conversations" (array) — got ${keys.length ? `keys ${keys.join(', ')}` : 'an empty object'}`,
    };
  }
  if (prefixFields.length > 1) {
    return {
      reason: `a row holds one of "prompt", "messages" or "conversations" — got ${prefixFields.map((field) => `"${field}"`).join(' and ')}`,
    };
  }
  const parsed = DatasetRowSchema.safeParse(present);
  if (!parsed.success) return { reason: describeRowIssues(parsed.error) };
  return buildItem(parsed.data, raw as Record<string, unknown>, position);
}

function buildItem(
  row: DatasetRow,
  raw: Record<string, unknown>,
  position: { index: number; line: number },
): NormalisedRow {
  const conversation = conversationOf(row);
  if ('reason' in conversation) return conversation;
  if (row.system !== undefined && conversation.system !== undefined) {
    return { reason: `the row has both a "system" field and a system message; keep one` };
  }
  const problem = checkPrefix(conversation.messages, row.conversations ? 'conversations' : 'messages');
  if (problem) return { reason: problem };
  const item: DatasetItem = {
    index: position.index,
    line: position.line,
    messages: conversation.messages,
    fields: passThrough(raw),
  };
  if (row.id !== undefined) item.id = row.id;
  const system = row.system ?? conversation.system;
  if (system !== undefined) item.system = system;
  if (row.image !== undefined) item.image = row.image;
  if (row.cwd !== undefined) item.cwd = row.cwd;
  return { item };
}

type Conversation = { messages: Message[]; system?: string } | { reason: string };

function conversationOf(row: DatasetRow): Conversation {
  if (row.prompt !== undefined) return { messages: [{ role: 'user', content: row.prompt }] };
  if (row.messages !== undefined) return messagesFromOpenAI(row.messages);
  return messagesFromShareGpt(row.conversations!);
}

function passThrough(raw: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (!KNOWN_FIELDS.has(key)) fields[key] = value;
  return fields;
}

/** Null columns are how Parquet/Arrow (and some JSONL writers) say "absent". */
function withoutNulls(raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== null && value !== undefined) out[key] = value;
  return out;
}

function describeRowIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : 'row'}: ${issue.message}`)
    .join('; ');
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
