import { z } from 'zod';
import { defineTool } from '../tool.js';
import { browserAvailable, browserSession } from './session.js';

export const BrowserClickParameters = z.object({
  ref: z.string().describe("The element reference from the snapshot (e.g., '@e5', '@e12')"),
});

export const browserClickTool = defineTool({
  name: 'browser_click',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    "Click on an element identified by its ref ID from the snapshot (e.g., '@e5'). The ref IDs are shown in square brackets in the snapshot output. Requires browser_navigate and browser_snapshot to be called first.",
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
