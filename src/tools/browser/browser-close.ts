import { z } from 'zod';
import { defineTool } from '../registry.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserCloseParameters = z.object({});

export const browserCloseTool = defineTool({
  name: 'browser_close',
  toolset: 'browser',
  version: '1',
  description:
    'Close the browser: its pages, cookies and storage are discarded. The next browser_navigate starts a fresh one.',
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
