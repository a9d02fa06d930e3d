import { z } from 'zod';
import { defineTool } from '../tool.js';
import { ToolFailure } from '../tool-failure.js';
import { askVisionModel } from './ask-vision-model.js';
import { imageAsDataUrl } from './image-source.js';

export const VisionAnalyzeParameters = z.object({
  image_url: z.string().describe('Image URL (http/https), local file path, or data: URL to load.'),
  question: z
    .string()
    .describe(
      'Your specific question or request about the image. Optional context the model uses on the next turn after seeing the image.',
    ),
});

export const visionAnalyzeTool = defineTool({
  name: 'vision_analyze',
  toolset: 'vision',
  version: '2',
  // Hermes' words, as hermes-agent sends them (tests/fixtures/hermes/tool-schemas.json).
  description:
    'Load an image into the conversation so you can see it. Accepts a URL, local file path, or data URL. When your active model has native vision, the image is attached to your context directly and you read the pixels yourself on the next turn — call this any time the user references an image (filepath in their message, URL in tool output, screenshot from the browser, etc.). For non-vision models, falls back to an auxiliary vision model that returns a text description.',
  parameters: VisionAnalyzeParameters,
  available: ({ services }) =>
    services?.auxiliary.vision ? true : 'no vision model: set auxiliary.vision (or a main endpoint) in the config',
  run: async ({ image_url: image, question }, { sandbox, services, signal }) => {
    if (image.trim() === '') throw new ToolFailure('image_url is empty', 'pass a URL, a file path or a data: URL');
    const endpoint = services?.auxiliary.vision;
    if (!services || !endpoint) throw new ToolFailure('no vision model is configured (auxiliary.vision)');
    const url = await imageAsDataUrl(image, { sandbox, web: services.settings.web, signal });
    const answer = await askVisionModel(services, endpoint, question, url, signal);
    return { answer, model: endpoint.model };
  },
});
