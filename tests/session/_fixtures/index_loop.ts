/**
 * Writes the id index of the session file given as the first argument again and again, with
 * as many ids as the second argument says, until killed. Prints "ready" before the first write.
 */
import { writeIdIndex } from "../../../src/session/id_index.ts";

const [sessionPath, count] = Deno.args;
const ids = Array.from({ length: Number(count) }, (_, i) => i.toString(16).padStart(8, "0"));
console.log("ready");
for (let size = 0;; size++) writeIdIndex(sessionPath, { sessionId: "s", size, ids });
