import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserClickParameters = z.object({
  ref: z.string().min(1).describe('The element to click, as the latest snapshot names it, e.g. "e12".'),
});

export const browserClickTool = defineTool({
  name: 'browser_click',
  toolset: 'browser',
  version: '1',
  description:
    'Click an element by its ref from the latest snapshot; returns the page afterwards (following any navigation the click started).',
  parameters: BrowserClickParameters,
  available: browserAvailable,
  run: ({ ref }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const element = await session.locate(ref);
      await element.click();
      await session.settle(await session.currentPage());
      return session.report();
    });
  },
});
