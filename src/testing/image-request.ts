import type { IncomingMessage } from 'node:http';

/** An image sent to POST /v1/images/edits, as the multipart form carried it. */
export interface ReceivedImage {
  /** The form field: `image` for one image, `image[]` for several (OpenAI's convention). */
  field: string;
  filename: string;
  type: string;
  base64: string;
}

/** The images request body as received (the fields the OpenAI images API defines). */
export interface ImageRequest {
  /** Which OpenAI images route was called. */
  route: 'generations' | 'edits';
  model?: string;
  prompt?: string;
  size?: string;
  n?: number;
  /** The source image first, then the references (edits only). */
  images?: ReceivedImage[];
  [field: string]: unknown;
}

/**
 * A generations body is JSON; an edits body is multipart/form-data (OpenAI's images API), parsed
 * with the platform's own form reader so the fake reads what a real service would.
 */
export async function readImageRequest(
  request: IncomingMessage,
  route: ImageRequest['route'],
): Promise<ImageRequest | string> {
  const body = await readRaw(request);
  if (route === 'generations') {
    try {
      return { ...(JSON.parse(body.toString('utf8')) as object), route } as ImageRequest;
    } catch (error) {
      return `the request body is not JSON: ${(error as Error).message}`;
    }
  }
  const type = request.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) return `images/edits takes multipart/form-data, not '${type}'`;
  const form = await new Request('http://images.invalid/', {
    method: 'POST',
    headers: { 'content-type': type },
    body,
  }).formData();
  const parsed: ImageRequest = { route, images: [] };
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') parsed[field] = value;
    else
      parsed.images!.push({
        field,
        filename: value.name,
        type: value.type,
        base64: Buffer.from(await value.arrayBuffer()).toString('base64'),
      });
  }
  return parsed;
}

function readRaw(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}
