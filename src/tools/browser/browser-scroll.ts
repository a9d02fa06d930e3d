import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserScrollParameters = z.object({
  direction: z.enum(['up', 'down']).describe('Direction to scroll'),
});

export const browserScrollTool = defineTool({
  name: 'browser_scroll',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Scroll the page in a direction. Use this to reveal more content that may be below or above the current viewport. Requires browser_navigate to be called first.',
  parameters: BrowserScrollParameters,
  available: browserAvailable,
  run: ({ direction }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      const position = (await page.evaluate(scrollScript(direction))) as {
        x: number;
        y: number;
        height: number;
        viewport: number;
      };
      const { x, y, height, viewport } = position;
      const lead = `Scrolled ${direction}: now at y=${y} (x=${x}) of a ${height} px page, ${viewport} px visible.`;
      return session.report({ lead });
    });
  },
});

/** Runs in the page (the project compiles without DOM types, so the page code is a string). */
function scrollScript(direction: 'up' | 'down'): string {
  const [dx, dy] = { up: [0, -0.8], down: [0, 0.8] }[direction];
  return `(() => {
    scrollBy(${dx} * innerWidth, ${dy} * innerHeight);
    const root = document.scrollingElement || document.documentElement;
    return { x: Math.round(scrollX), y: Math.round(scrollY), height: root.scrollHeight, viewport: innerHeight };
  })()`;
}
