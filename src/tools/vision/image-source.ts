import type { WebConfig } from '../../config/web.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { ToolFailure } from '../tool-failure.js';
import { inSandbox } from '../sandbox-failure.js';
import { FetchFailure, fetchUrl } from '../web/fetch-url.js';

/** Images larger than this are refused rather than sent to a model. */
export const MAX_IMAGE_BYTES = 20_000_000;

const MAGIC: Array<[string, (head: Buffer) => boolean]> = [
  ['image/png', (head) => head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))],
  ['image/jpeg', (head) => head[0] === 0xff && head[1] === 0xd8],
  ['image/gif', (head) => head.subarray(0, 4).toString('latin1') === 'GIF8'],
  [
    'image/webp',
    (head) => head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP',
  ],
  ['image/bmp', (head) => head.subarray(0, 2).toString('latin1') === 'BM'],
];

/** The image type by its first bytes (file names and servers lie), or undefined. */
export function sniffImageType(data: Buffer): string | undefined {
  return MAGIC.find(([, test]) => test(data))?.[0];
}

function dataUrl(data: Buffer, where: string, declared?: string): string {
  const type = sniffImageType(data) ?? (declared?.startsWith('image/') ? declared : undefined);
  if (!type)
    throw new ToolFailure(
      `${where} is not an image (PNG, JPEG, GIF, WebP or BMP)`,
      'pass an image file, an image URL or a data:image/... URL',
    );
  return `data:${type};base64,${data.toString('base64')}`;
}

/**
 * The image as a data URL the vision model can read: a data URL as given, an http(s) URL fetched
 * under the network policy (the harness fetches it, so the model endpoint never reaches a
 * private address for it), or a file read through the sandbox (works in Docker).
 */
export async function imageAsDataUrl(
  image: string,
  input: { sandbox: Sandbox; web: WebConfig; signal: AbortSignal },
): Promise<string> {
  if (image.startsWith('data:')) {
    if (!/^data:image\/[\w.+-]+;base64,/.test(image))
      throw new ToolFailure('a data URL must be data:image/<type>;base64,<data>');
    return image;
  }
  if (/^https?:\/\//i.test(image)) {
    try {
      const fetched = await fetchUrl(
        image,
        input.web,
        {
          timeoutMs: input.web.extract.timeout_ms,
          maxBytes: MAX_IMAGE_BYTES,
          maxRedirects: input.web.extract.max_redirects,
        },
        input.signal,
        'image/*',
      );
      if (fetched.status >= 400) throw new ToolFailure(`HTTP ${fetched.status} from ${fetched.finalUrl}`);
      if (fetched.truncated) throw new ToolFailure(`the image at ${image} is larger than ${MAX_IMAGE_BYTES} bytes`);
      return dataUrl(fetched.body, image, fetched.contentType.split(';')[0]);
    } catch (error) {
      if (error instanceof FetchFailure) throw new ToolFailure(`could not fetch ${image}: ${error.message}`);
      throw error;
    }
  }
  const data = await inSandbox(() => input.sandbox.readFile(image));
  if (data.length > MAX_IMAGE_BYTES) throw new ToolFailure(`${image} is larger than ${MAX_IMAGE_BYTES} bytes`);
  return dataUrl(data, image);
}
