import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserTypeParameters = z.object({
  ref: z.string().describe("The element reference from the snapshot (e.g., '@e3')"),
  text: z.string().describe('The text to type into the field'),
});

export const browserTypeTool = defineTool({
  name: 'browser_type',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Type text into an input field identified by its ref ID. Clears the field first, then types the new text. Requires browser_navigate and browser_snapshot to be called first.',
  parameters: BrowserTypeParameters,
  available: browserAvailable,
  run: ({ ref, text }, context) => {
    const session = browserSession(context);
    return session.exclusive(async () => {
      const field = await session.locate(ref);
      await field.fill(text);
      await session.settle(await session.currentPage());
      return session.report();
    });
  },
});
