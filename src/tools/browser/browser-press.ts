import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserPressParameters = z.object({
  key: z
    .string()
    .min(1)
    .describe(
      'A key or chord for the focused element: "Enter", "Tab", "Escape", "ArrowDown", "PageDown", "Control+a", or one character.',
    ),
});

export const browserPressTool = defineTool({
  name: 'browser_press',
  toolset: 'browser',
  version: '1',
  description: 'Press a key (or a chord such as "Control+a") in the page; returns the page afterwards.',
  parameters: BrowserPressParameters,
  available: browserAvailable,
  run: ({ key }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      await page.keyboard.press(key);
      await session.settle(page);
      return session.report();
    });
  },
});
