/**
 * The request process of the web tools (see `web_transport.ts`): reads one request as JSON on
 * stdin, makes it through the guard (never relaxed here), prints one JSON line
 * (`WebAnswer`) and exits. Started with the network and nothing else. A PDF is read as text
 * here (`requestWithPdf`), an HTML page extracted (`htmlOfAnswer`), JSON indented
 * (`jsonOfAnswer`) and a search provider's answer read (`searchOfAnswer`), never in tern's
 * own process.
 */
import { Buffer } from "node:buffer";
import type { WebAnswer } from "./web_transport.ts";
import type { WebRequest } from "./web_request.ts";
import { WebRequestError } from "./web_request.ts";
import { requestWithPdf } from "./web_pdf.ts";
import { htmlOfAnswer, jsonOfAnswer } from "./web_extract.ts";
import { searchOfAnswer } from "./web_search_providers.ts";

const input = await new Response(Deno.stdin.readable).text();
let answer: WebAnswer;
try {
  const request = JSON.parse(input) as WebRequest;
  const response = await requestWithPdf(request);
  const html = response.pdf === undefined ? await htmlOfAnswer(request, response) : undefined;
  const json = response.pdf === undefined && html === undefined
    ? jsonOfAnswer(request, response)
    : undefined;
  const search = searchOfAnswer(request, response);
  // What was read is sent without the answer itself: no bigger than its caps.
  const read = html ?? json ?? search;
  answer = {
    ok: true,
    ...response,
    body: read === undefined ? Buffer.from(response.body).toString("base64") : "",
    ...(html === undefined ? {} : { html }),
    ...(json === undefined ? {} : { json }),
    ...(search === undefined ? {} : { search }),
  };
} catch (error) {
  answer = error instanceof WebRequestError
    ? { ok: false, kind: error.kind, message: error.message }
    : {
      ok: false,
      kind: "network",
      message: error instanceof Error ? error.message : String(error),
    };
}
await Deno.stdout.write(new TextEncoder().encode(`${JSON.stringify(answer)}\n`));
Deno.exit(0);
