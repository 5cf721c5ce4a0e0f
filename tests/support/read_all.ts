/** For tests of resource readers that are not about what the model may read. */
import type { ReadRefusal } from "../../src/config/workspace_file.ts";

/** A refusal that refuses nothing. */
export const READ_ALL: ReadRefusal = () => undefined;
