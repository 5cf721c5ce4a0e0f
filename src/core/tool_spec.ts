/** How a tool is described to a model; shared by the tools and the providers. */

/** JSON Schema object as sent to a model API. */
export type JsonSchema = Record<string, unknown>;

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}
