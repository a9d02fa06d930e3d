import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { askVisionModel } from '../vision/ask-vision-model.js';
import { type BrowserSession, browserAvailable, browserSession } from './session.js';

export const BrowserVisionParameters = z.object({
  question: z
    .string()
    .describe("What you want to know about the page visually. Be specific about what you're looking for."),
  annotate: z
    .boolean()
    .default(false)
    .describe(
      'If true, overlay numbered [N] labels on interactive elements. Each [N] maps to ref @eN for subsequent browser commands. Useful for QA and spatial reasoning about page layout.',
    ),
});

export const browserVisionTool = defineTool({
  name: 'browser_vision',
  toolset: 'browser',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Take a screenshot of the current page so you can inspect it visually. Use this when you need to understand what the page looks like - especially for CAPTCHAs, visual verification challenges, complex layouts, or cases where the text snapshot misses important visual information. When your active model has native vision, the screenshot is attached to your context directly and you inspect it on the next turn; otherwise Hermes falls back to an auxiliary vision model and returns a text analysis. Includes a screenshot_path that you can share with the user by including MEDIA:<screenshot_path> in your response. Requires browser_navigate to be called first.',
  parameters: BrowserVisionParameters,
  available: (context) => {
    const browser = browserAvailable(context);
    if (browser !== true) return browser;
    return context.services?.auxiliary.vision
      ? true
      : 'no vision model: set auxiliary.vision (or a main endpoint) in the config';
  },
  run: ({ question, annotate }, context) => {
    const { services, signal } = context;
    const endpoint = services?.auxiliary.vision;
    if (!services || !endpoint) throw new ToolFailure('no vision model is configured (auxiliary.vision)');
    const session = browserSession(context);
    return session.exclusive(async () => {
      const page = await session.currentPage();
      if (question.trim() === '') throw new ToolFailure('question is empty', 'say what to look for');
      const labelled = annotate ? await labelRefs(session) : 0;
      const screenshot = await page
        .screenshot({ type: 'png' })
        .finally(() => (labelled ? page.evaluate(UNLABEL_SCRIPT) : undefined));
      // Kept beside the run store (batch, eval) so the record can point at what the model was shown.
      const kept = await services.artifacts?.save('screenshot.png', screenshot);
      const url = `data:image/png;base64,${screenshot.toString('base64')}`;
      const answer = await askVisionModel(services, endpoint, question, url, signal);
      return {
        answer,
        model: endpoint.model,
        url: page.url(),
        ...(annotate ? { annotated: labelled } : {}),
        ...(kept ? { screenshot: kept } : {}),
      };
    });
  },
});

const LABEL_CLASS = 'traj-ref-label';
const UNLABEL_SCRIPT = `document.querySelectorAll('.${LABEL_CLASS}').forEach((label) => label.remove())`;

/** Numbered [N] boxes over the elements of the latest snapshot, N being the ref's number (@eN). */
async function labelRefs(session: BrowserSession): Promise<number> {
  const page = await session.currentPage();
  const boxes: Array<{ n: string; x: number; y: number }> = [];
  for (const ref of session.currentRefs) {
    const box = await page
      .getByRef(ref)
      .boundingBox({ timeout: 1_000 })
      .catch(() => null);
    if (box) boxes.push({ n: ref.replace(/^e/, ''), x: Math.round(box.x), y: Math.round(box.y) });
  }
  await page.evaluate(`(() => {
    for (const { n, x, y } of ${JSON.stringify(boxes)}) {
      const label = document.createElement('div');
      label.className = '${LABEL_CLASS}';
      label.textContent = '[' + n + ']';
      label.style.cssText = 'position:fixed;z-index:2147483647;left:' + x + 'px;top:' + y + 'px;background:#ff0;color:#000;font:bold 12px monospace;padding:0 2px;border:1px solid #000;pointer-events:none';
      document.body.appendChild(label);
    }
  })()`);
  return boxes.length;
}
