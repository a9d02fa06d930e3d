import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserGetImagesParameters = z.object({
  limit: z.number().int().min(1).max(200).default(50).describe('At most this many images, in page order.'),
});

interface PageImage {
  src: string;
  alt: string;
  width: number;
  height: number;
}

/** Runs in the page (the project compiles without DOM types, so the page code is a string). */
const IMAGES_SCRIPT = `[...document.images].map((image) => ({
  src: image.currentSrc || image.src, alt: image.alt, width: image.naturalWidth, height: image.naturalHeight,
}))`;

export const browserGetImagesTool = defineTool({
  name: 'browser_get_images',
  toolset: 'browser',
  version: '1',
  description:
    'List the images of the current page: absolute URL, alt text and natural size (pass a URL to vision tools to look at one).',
  parameters: BrowserGetImagesParameters,
  available: browserAvailable,
  run: ({ limit }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      const images = (await page.evaluate(IMAGES_SCRIPT)) as PageImage[];
      // A data: URL can be megabytes; its start says what it is.
      const short = (src: string) => (src.startsWith('data:') ? `${src.slice(0, 60)}…` : src);
      const shown = images.slice(0, limit).map((image) => ({ ...image, src: short(image.src) }));
      return { url: page.url(), count: images.length, images: shown };
    });
  },
});
