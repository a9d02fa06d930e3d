/**
 * The server's own words from an error body, whatever its shape:
 * - the OpenAI `{"error": {"message": ...}}` object (OpenAI, Azure, Groq, xAI, DeepSeek, Mistral, …);
 * - vLLM's flat `{"object": "error", "message": ..., "code": 400}` and other flat `message`/`detail` bodies;
 * - OpenRouter's `{"error": {"message": "Provider returned error", "metadata": {"raw": ...}}}`, where
 *   the upstream provider's message is only inside `metadata.raw`;
 * - Ollama's `{"error": "model 'x' not found"}`;
 * - plain text (a proxy, a gateway page).
 */

const MAX_MESSAGE_CHARACTERS = 2_000;

/** The message of an error body read as text; undefined when there is nothing to say. */
export function errorTextMessage(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return clip(plainText(trimmed));
  }
  return errorBodyMessage(parsed) ?? clip(trimmed);
}

/** The message of an error body already parsed as JSON (a whole body or its `error` member). */
export function errorBodyMessage(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() === '' ? undefined : clip(body.trim());
  if (!isObject(body)) return undefined;
  const inner = body.error;
  if (typeof inner === 'string' && inner.trim() !== '') return clip(withDetail(inner, body));
  if (isObject(inner)) return errorObjectMessage(inner);
  return errorObjectMessage(body);
}

/** `message` (or `detail`, FastAPI's field), with OpenRouter's upstream `metadata.raw` after it. */
function errorObjectMessage(error: Record<string, unknown>): string | undefined {
  const message = textOf(error.message) ?? textOf(error.detail) ?? textOf(error.msg);
  const raw = upstreamMessage(error.metadata);
  if (message && raw && !message.includes(raw)) return clip(`${message}: ${raw}`);
  const found = raw ?? message;
  return found ? clip(found) : undefined;
}

/** OpenRouter's `metadata.raw`: the upstream body, itself often an error body in JSON. */
function upstreamMessage(metadata: unknown): string | undefined {
  if (!isObject(metadata)) return undefined;
  const raw = metadata.raw;
  const provider = typeof metadata.provider_name === 'string' ? ` (${metadata.provider_name})` : '';
  let text: string | undefined;
  if (typeof raw === 'string') text = errorTextMessage(raw);
  else if (raw !== undefined && raw !== null) text = errorBodyMessage(raw) ?? JSON.stringify(raw);
  if (!text && Array.isArray(metadata.reasons))
    text = metadata.reasons.filter((reason) => typeof reason === 'string').join('; ');
  return text ? `${text}${provider}` : undefined;
}

/** FastAPI-style `detail` may be a list of validation problems. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (Array.isArray(value) && value.length > 0) {
    return value
      .map((entry) => (isObject(entry) && typeof entry.msg === 'string' ? entry.msg : JSON.stringify(entry)))
      .join('; ');
  }
  return undefined;
}

function withDetail(message: string, body: Record<string, unknown>): string {
  const detail = textOf(body.message) ?? textOf(body.detail);
  return detail && detail !== message ? `${message}: ${detail}` : message;
}

/** An HTML page says most in its title; tags and runs of white space are dropped either way. */
function plainText(text: string): string {
  if (!/^<(!doctype|html|head|body)/i.test(text)) return text;
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1]?.trim();
  const body = text
    .replace(/<(head|script|style)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return title && !body.startsWith(title) ? `${title}: ${body}` : body || text;
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARACTERS
    ? `${text.slice(0, MAX_MESSAGE_CHARACTERS)}… (${text.length} characters)`
    : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The most of an error body read: its message is in the first bytes; the rest is not downloaded. */
export const ERROR_BODY_BYTES = 1024 * 1024;

/** What stands for an error body past ERROR_BODY_BYTES. */
export const UNREAD_ERROR_BODY = `(an error body over ${ERROR_BODY_BYTES} bytes, not read)`;

/**
 * The openai package keeps only the `error` member of a JSON error body, so a flat body (vLLM)
 * reaches it as nothing. The client's fetch keeps each error body's text here, keyed by the
 * response's headers object, which is what the package hands to the error it throws.
 */
const rawErrorBodies = new WeakMap<object, string>();

export function rememberErrorBody(headers: object, text: string): void {
  rawErrorBodies.set(headers, text);
}

export function rememberedErrorBody(headers: object | undefined): string | undefined {
  return headers ? rawErrorBodies.get(headers) : undefined;
}
