import { z } from 'zod';
import { EndpointSchema, type Endpoint } from './endpoint.js';
import { validate } from './validate.js';

/** An auxiliary model: any endpoint field; unset ones are taken from the run's main endpoint. */
export const AuxiliaryEndpointSchema = z.strictObject(EndpointSchema.partial().shape);
export type AuxiliaryEndpoint = z.infer<typeof AuxiliaryEndpointSchema>;

/** The models tools use beside the agent's own (run config and TRAJ_HOME/config.yaml `auxiliary:`). */
export const AuxiliaryConfigSchema = z.strictObject({
  vision: AuxiliaryEndpointSchema.optional().describe('vision_analyze (default: the main endpoint)'),
  summarizer: AuxiliaryEndpointSchema.optional().describe(
    'web_extract summaries of long pages and context compression summaries (default: the main endpoint)',
  ),
  image: AuxiliaryEndpointSchema.optional().describe('image_generate: an endpoint serving /v1/images/generations'),
  moa: z
    .strictObject({
      reference: z.array(AuxiliaryEndpointSchema).min(1).describe('models asked in parallel'),
      aggregator: AuxiliaryEndpointSchema.describe('the model combining their answers'),
    })
    .optional(),
});
export type AuxiliaryConfig = z.infer<typeof AuxiliaryConfigSchema>;

/** Auxiliary models as tools use them: full endpoints (plain JSON, they cross into worker threads). */
export const AuxiliaryModelsSchema = z.object({
  vision: EndpointSchema.optional(),
  summarizer: EndpointSchema.optional(),
  image: EndpointSchema.optional(),
  moa: z.object({ reference: z.array(EndpointSchema), aggregator: EndpointSchema }).optional(),
});
export type AuxiliaryModels = z.infer<typeof AuxiliaryModelsSchema>;

/**
 * Fill each auxiliary model's unset fields from the main endpoint. Vision falls back to the main
 * endpoint itself; the summariser is used only when set (a long page is cut otherwise), and image
 * and MoA exist only when configured.
 */
export function resolveAuxiliary(config: AuxiliaryConfig | undefined, main: Endpoint): AuxiliaryModels {
  const fill = (partial: AuxiliaryEndpoint, where: string): Endpoint =>
    validate(EndpointSchema, { ...main, ...stripUndefined(partial) }, `auxiliary.${where}`);
  return {
    vision: config?.vision ? fill(config.vision, 'vision') : main,
    ...(config?.summarizer ? { summarizer: fill(config.summarizer, 'summarizer') } : {}),
    ...(config?.image ? { image: fill(config.image, 'image') } : {}),
    ...(config?.moa
      ? {
          moa: {
            reference: config.moa.reference.map((entry, index) => fill(entry, `moa.reference.${index}`)),
            aggregator: fill(config.moa.aggregator, 'moa.aggregator'),
          },
        }
      : {}),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}
