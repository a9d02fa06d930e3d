import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserCloseParameters = z.object({});

export const browserCloseTool = defineTool({
  name: 'browser_close',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Close the browser session and release resources. Call this when done with browser tasks to free up Browserbase session quota.',
  parameters: BrowserCloseParameters,
  available: browserAvailable,
  run: (_args, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const wasOpen = session.isOpen;
      await session.closeContext();
      return wasOpen ? 'The browser is closed; cookies and storage are gone.' : 'The browser was not open.';
    });
  },
});
