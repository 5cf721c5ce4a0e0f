/** A stand-in writing tool for checkpoint tests: a "bash" that runs a function on the host. */
import type { Tool } from "../../src/tools/define.ts";

/** A "bash" tool (not read-only, run on the host) whose every call runs `body`. */
export function hostTool(body: () => void): Tool {
  return {
    name: "bash",
    description: "",
    readOnly: false,
    runsIn: "host",
    parameters: {},
    paths: () => Promise.resolve([]),
    run: () => {
      body();
      return Promise.resolve({ status: "OK", output: "" });
    },
  } as unknown as Tool;
}
