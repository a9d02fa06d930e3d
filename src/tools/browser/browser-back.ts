import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { browserAvailable, browserSession, isTimeout } from './session.js';

export const BrowserBackParameters = z.object({});

export const browserBackTool = defineTool({
  name: 'browser_back',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description: 'Navigate back to the previous page in browser history. Requires browser_navigate to be called first.',
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
