import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserPressParameters = z.object({
  key: z.string().describe("Key to press (e.g., 'Enter', 'Tab', 'Escape', 'ArrowDown')"),
});

export const browserPressTool = defineTool({
  name: 'browser_press',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Press a keyboard key. Useful for submitting forms (Enter), navigating (Tab), or keyboard shortcuts. Requires browser_navigate to be called first.',
  parameters: BrowserPressParameters,
  available: browserAvailable,
  run: ({ key }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      // A press on the focused element waits for a navigation it starts (Enter sending a form),
      // where page.keyboard.press returns before it and the snapshot shows the page being left.
      const focused = page.locator('*:focus');
      if ((await focused.count()) === 1) await focused.press(key);
      else await page.keyboard.press(key);
      await session.settle(page);
      return session.report();
    });
  },
});
