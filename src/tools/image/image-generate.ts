import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Endpoint } from '../../config/endpoint.js';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { inSandbox } from '../sandbox-failure.js';
import { imageAsDataUrl, sniffImageType } from '../vision/image-source.js';

/** Hermes' aspect ratios as the sizes OpenAI-style image services take. */
export const ASPECT_RATIO_SIZES = { landscape: '1792x1024', square: '1024x1024', portrait: '1024x1792' } as const;
const MAX_DOWNLOAD_BYTES = 50_000_000;

export const ImageGenerateParameters = z.object({
  prompt: z
    .string()
    .describe(
      'The text prompt describing the desired image (text-to-image) or the edit to apply (image-to-image). Be detailed and descriptive.',
    ),
  aspect_ratio: z
    .enum(['landscape', 'square', 'portrait'])
    .default('landscape')
    .describe(
      "The aspect ratio of the generated image. 'landscape' is 16:9 wide, 'portrait' is 16:9 tall, 'square' is 1:1.",
    ),
  image_url: z
    .string()
    .optional()
    .describe(
      'Optional source image to edit/transform (image-to-image). When provided, the active backend routes to its image editing endpoint; when omitted, it generates from text alone. Pass a public URL or an absolute local file path from the conversation. Only honored by models that support editing — the description above indicates whether the active model does.',
    ),
  reference_image_urls: z
    .array(z.string())
    .optional()
    .describe(
      'Optional list of additional reference image URLs / paths (style, character, or composition references) to guide an image-to-image edit. Supported only by some models and capped per-model; the description above indicates the max.',
    ),
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
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Generate high-quality images from text prompts (text-to-image), or edit / transform an existing image (image-to-image) when the active model supports it. Pass `image_url` to edit that image; add `reference_image_urls` for style/composition references; omit both for text-to-image. The underlying backend (FAL, OpenAI, xAI, etc.) and model are user-configured and not selectable by the agent. Returns the result in the `image` field — either a URL or an absolute file path. To show it to the user, reference that path/URL in your response using the file-delivery convention for the current platform (your platform guidance describes how files are delivered here). When the active terminal backend has a different filesystem, successful local-file results may also include `agent_visible_image` for follow-up terminal/file operations.',
  parameters: ImageGenerateParameters,
  available: ({ services, env }) => {
    const endpoint = services?.auxiliary.image;
    if (!endpoint) return 'auxiliary.image (an endpoint serving /v1/images/generations) is not configured';
    return env[endpoint.api_key_env] || isLocal(endpoint.base_url)
      ? true
      : `${endpoint.api_key_env} is not set (the key of auxiliary.image)`;
  },
  run: async (args, { services, sandbox, signal, env }) => {
    const endpoint = services?.auxiliary.image;
    if (!endpoint || !services) throw new ToolFailure('auxiliary.image is not configured');
    if (args.prompt.trim() === '') throw new ToolFailure('prompt is empty', 'describe the image');
    const size = ASPECT_RATIO_SIZES[args.aspect_ratio];
    const sources = [...(args.image_url ? [args.image_url] : []), ...(args.reference_image_urls ?? [])];
    if (!args.image_url && sources.length > 0)
      throw new ToolFailure('reference_image_urls guide an edit of image_url', 'pass image_url too, or omit both');
    const images = await Promise.all(
      sources.map((source) => imageAsDataUrl(source, { sandbox, web: services.settings.web, signal })),
    );
    const request = { endpoint, prompt: args.prompt, size, env, signal };
    const answer = images.length > 0 ? await edit(request, images) : await generate(request);
    const first = answer.data[0]!;
    const data = first.b64_json ? Buffer.from(first.b64_json, 'base64') : await download(first.url!, endpoint, signal);
    const type = sniffImageType(data);
    if (!type) throw new ToolFailure(`the image service (${endpoint.model}) returned data that is not an image`);
    const path = `images/${createHash('sha256').update(data).digest('hex').slice(0, 16)}.${EXTENSIONS[type]}`;
    await inSandbox(() => sandbox.writeFile(path, data));
    return {
      image: path,
      ...(first.url ? { url: first.url } : {}),
      ...(first.revised_prompt ? { revised_prompt: first.revised_prompt } : {}),
      aspect_ratio: args.aspect_ratio,
      bytes: data.length,
    };
  },
});

interface ImageRequest {
  endpoint: Endpoint;
  prompt: string;
  size: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

function generate(request: ImageRequest): Promise<z.infer<typeof ImagesResponseSchema>> {
  const { endpoint, prompt, size } = request;
  const body = JSON.stringify({ model: endpoint.model, prompt, size, n: 1, ...endpoint.extra_body });
  return post(request, 'generations', body, { 'content-type': 'application/json' });
}

/** Image-to-image: OpenAI's /images/edits, the source first and the references after it. */
function edit(request: ImageRequest, images: readonly string[]): Promise<z.infer<typeof ImagesResponseSchema>> {
  const form = new FormData();
  form.set('model', request.endpoint.model);
  form.set('prompt', request.prompt);
  form.set('size', request.size);
  images.forEach((dataUrl, index) => {
    const [head, base64] = dataUrl.split(',', 2) as [string, string];
    const type = /^data:([^;]+)/.exec(head)?.[1] ?? 'image/png';
    const file = new Blob([Buffer.from(base64, 'base64')], { type });
    form.append(images.length > 1 ? 'image[]' : 'image', file, `image-${index}.${EXTENSIONS[type] ?? 'png'}`);
  });
  return post(request, 'edits', form, {});
}

async function post(
  { endpoint, env, signal }: ImageRequest,
  path: 'generations' | 'edits',
  body: string | FormData,
  headers: Record<string, string>,
): Promise<z.infer<typeof ImagesResponseSchema>> {
  const url = `${endpoint.base_url.replace(/\/$/, '')}/images/${path}`;
  const key = env[endpoint.api_key_env];
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body,
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
      response.status === 400 ? 'change the prompt or aspect_ratio' : undefined,
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
