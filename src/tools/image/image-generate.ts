import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Endpoint } from '../../config/endpoint.js';
import { defineTool, ToolFailure } from '../registry.js';
import { inSandbox } from '../sandbox-failure.js';
import { sniffImageType } from '../vision/image-source.js';

export const IMAGE_SIZES = ['256x256', '512x512', '1024x1024', '1792x1024', '1024x1792'] as const;
const MAX_DOWNLOAD_BYTES = 50_000_000;

export const ImageGenerateParameters = z.object({
  prompt: z.string().min(1).describe('What the image shows, in detail.'),
  size: z.enum(IMAGE_SIZES).optional().describe('Width x height in pixels (default 1024x1024).'),
});

/** The OpenAI images response: each image as base64 or a URL. */
const ImagesResponseSchema = z.object({
  data: z
    .array(
      z.object({ b64_json: z.string().optional(), url: z.string().optional(), revised_prompt: z.string().optional() }),
    )
    .min(1),
});

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
};

export const imageGenerateTool = defineTool({
  name: 'image_generate',
  toolset: 'image_gen',
  version: '1',
  description:
    'Generate an image from a text prompt. The image is saved in the working directory; the result gives its path (and URL when the service returns one).',
  parameters: ImageGenerateParameters,
  available: ({ services, env }) => {
    const endpoint = services?.auxiliary.image;
    if (!endpoint) return 'auxiliary.image (an endpoint serving /v1/images/generations) is not configured';
    return env[endpoint.api_key_env] || isLocal(endpoint.base_url)
      ? true
      : `${endpoint.api_key_env} is not set (the key of auxiliary.image)`;
  },
  run: async ({ prompt, size }, { services, sandbox, signal, env }) => {
    const endpoint = services?.auxiliary.image;
    if (!endpoint) throw new ToolFailure('auxiliary.image is not configured');
    const answer = await generate(endpoint, prompt, size ?? '1024x1024', env, signal);
    const first = answer.data[0]!;
    const data = first.b64_json ? Buffer.from(first.b64_json, 'base64') : await download(first.url!, endpoint, signal);
    const type = sniffImageType(data);
    if (!type) throw new ToolFailure(`the image service (${endpoint.model}) returned data that is not an image`);
    const path = `images/${createHash('sha256').update(data).digest('hex').slice(0, 16)}.${EXTENSIONS[type]}`;
    await inSandbox(() => sandbox.writeFile(path, data));
    return {
      path,
      ...(first.url ? { url: first.url } : {}),
      ...(first.revised_prompt ? { revised_prompt: first.revised_prompt } : {}),
      bytes: data.length,
    };
  },
});

async function generate(
  endpoint: Endpoint,
  prompt: string,
  size: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<z.infer<typeof ImagesResponseSchema>> {
  const url = `${endpoint.base_url.replace(/\/$/, '')}/images/generations`;
  const key = env[endpoint.api_key_env];
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ model: endpoint.model, prompt, size, n: 1, ...endpoint.extra_body }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(endpoint.timeout_ms)]),
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ToolFailure(`the image service at ${endpoint.base_url} did not answer: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok)
    throw new ToolFailure(
      `the image service answered HTTP ${response.status}: ${text.slice(0, 300)}`,
      response.status === 400 ? 'change the prompt or size' : undefined,
    );
  const parsed = ImagesResponseSchema.safeParse(safeJson(text));
  if (!parsed.success || (!parsed.data.data[0]!.b64_json && !parsed.data.data[0]!.url))
    throw new ToolFailure(`the image service returned no image: ${text.slice(0, 200)}`);
  return parsed.data;
}

/** The service's own image URL: trusted like the service (it is configured, not chosen by the model). */
async function download(url: string, endpoint: Endpoint, signal: AbortSignal): Promise<Buffer> {
  const response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(endpoint.timeout_ms)]) });
  if (!response.ok) throw new ToolFailure(`downloading the generated image failed: HTTP ${response.status}`);
  const data = Buffer.from(await response.arrayBuffer());
  if (data.length > MAX_DOWNLOAD_BYTES) throw new ToolFailure('the generated image is larger than 50 MB');
  return data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isLocal(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]';
}
