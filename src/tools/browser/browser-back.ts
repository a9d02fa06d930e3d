import { z } from 'zod';
import { defineTool, ToolFailure } from '../registry.js';
import { browserAvailable, browserSession, isTimeout } from './session.js';

export const BrowserBackParameters = z.object({});

export const browserBackTool = defineTool({
  name: 'browser_back',
  toolset: 'browser',
  version: '1',
  description: "Go back to the previous page in the browser's history; returns that page.",
  parameters: BrowserBackParameters,
  available: browserAvailable,
  run: (_args, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      try {
        const response = await page.goBack({ waitUntil: 'load' });
        if (response === null && page.url() === 'about:blank') {
          throw new ToolFailure('there is no previous page', 'open a page with browser_navigate first');
        }
      } catch (error) {
        if (!isTimeout(error)) throw error;
        session.note(
          `the page did not finish loading within ${session.config.navigation_timeout_ms} ms; this is what it shows so far`,
        );
      }
      return session.report();
    });
  },
});
