import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserGetImagesParameters = z.object({});

/** Images listed at most, in page order (Hermes' tool takes no limit). */
const IMAGES_SHOWN = 100;

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
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Get a list of all images on the current page with their URLs and alt text. Useful for finding images to analyze with the vision tool. Requires browser_navigate to be called first.',
  parameters: BrowserGetImagesParameters,
  available: browserAvailable,
  run: (_args, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      const images = (await page.evaluate(IMAGES_SCRIPT)) as PageImage[];
      // A data: URL can be megabytes; its start says what it is.
      const short = (src: string) => (src.startsWith('data:') ? `${src.slice(0, 60)}…` : src);
      const shown = images.slice(0, IMAGES_SHOWN).map((image) => ({ ...image, src: short(image.src) }));
      return { url: page.url(), count: images.length, images: shown };
    });
  },
});
