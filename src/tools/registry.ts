/** The set of tools offered to the model, by name. */
import type { Tool } from "./define.ts";
import type { ToolSpec } from "../core/tool_spec.ts";

/**
 * Decides which specs a request carries and in what order, from every registered tool's spec
 * in registration order (the deferred MCP tools of src/harness/deferred_tools.ts).
 */
export interface SpecView {
  specs(all: ToolSpec[]): ToolSpec[];
}

export class ToolRegistry {
  #tools = new Map<string, Tool>();
  #view: SpecView | undefined;

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; a second tool of the same name is a TypeError. */
  register(tool: Tool): void {
    if (this.#tools.has(tool.name)) {
      throw new TypeError(`Cannot register tool "${tool.name}": the name is taken`);
    }
    this.#tools.set(tool.name, tool);
  }

  /** Removes the tool called `name`; false when there was none. */
  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }

  /** The tools' lines for the system prompt (see `Tool.guidance`), in registration order. */
  guidance(): string[] {
    return [...this.#tools.values()].flatMap((tool) => tool.guidance ?? []);
  }

  /** Shapes what `specs()` returns from now on; registries made by `derive` share it. */
  setView(view: SpecView): void {
    this.#view = view;
  }

  /** A registry of `tools` (a wrapped copy of these) whose specs go through the same view. */
  derive(tools: Iterable<Tool>): ToolRegistry {
    const registry = new ToolRegistry(tools);
    registry.#view = this.#view;
    return registry;
  }

  /** Specs for the model request: in registration order, unless a view shapes them. */
  specs(): ToolSpec[] {
    const all = [...this.#tools.values()].map(({ name, description, parameters }) => ({
      name,
      description,
      parameters,
    }));
    return this.#view?.specs(all) ?? all;
  }
}
