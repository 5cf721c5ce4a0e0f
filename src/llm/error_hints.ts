/**
 * What to do about the failures a person's own setup causes, added to the error a provider
 * ends with. A refused key (401, 403) names the variable or header it came from, never its
 * value, and how to replace it; a 404 names the URL tern asked (credentials in it hidden) and
 * the model, since one of the two is then likely wrong.
 */
import { apiUrl, shownUrl } from "../core/url_text.ts";
import { API_PATHS } from "./api_paths.ts";
import { clip, credentialHeaderNames } from "./errors.ts";
import type { ApiStyle } from "./model_info.ts";
import type { ErrorStreamEvent } from "./types.ts";

/** Where a request went and which credential it carried, by name only. */
export interface RequestPlace {
  /** The provider's name (`anthropic`, `openai-compatible`, a config entry's). */
  provider: string;
  api: ApiStyle;
  baseUrl: string;
  /** True when the request carried a key. */
  keySent: boolean;
  /** The variable the key was read from, when known. */
  keyVariable?: string;
  /** Where a key is looked for (`TERN_API_KEY`, the provider's own variable). */
  keyVariables: readonly string[];
  /** The request headers of the configuration: a credential among them counts as a key. */
  headers?: Record<string, string>;
}

const DOCTOR = "`tern doctor` checks the setup";
/** The most characters of a name or URL a hint quotes. */
const MAX_QUOTED_CHARS = 200;

/**
 * `event` with a hint after its message when its status is 401, 403 or 404; any other event
 * as it is. `model` is the model the request asked for. Never throws.
 */
export function withSetupHint(
  event: ErrorStreamEvent,
  place: RequestPlace,
  model: string,
): ErrorStreamEvent {
  const hint = setupHint(event.status, place, model);
  return hint === undefined ? event : { ...event, message: `${event.message}; ${hint}` };
}

function setupHint(status: number | undefined, place: RequestPlace, model: string) {
  const at = `provider ${quoted(place.provider)} at ${quoted(shownUrl(place.baseUrl))}`;
  if (status === 401 || status === 403) {
    const credential = credentialOf(place);
    if (credential === undefined) return noKeyHint(place, at);
    if (status === 401) return `${at} refused ${credential.what}: ${credential.fix}; ${DOCTOR}`;
    return `${at} refused ${credential.what} for model ${quoted(model)}: check that it may ` +
      `use that model, or ${credential.fix}; ${DOCTOR}`;
  }
  if (status === 404) {
    return `the base URL or the model is likely wrong: tern asked ${quoted(askedUrl(place))} ` +
      `for model ${quoted(model)}; check the base URL (--base-url, TERN_BASE_URL or "baseUrl" ` +
      `in the config${versionNote(place.baseUrl)}) and the model (--model or TERN_MODEL; ` +
      "`tern models` lists the models the server offers)";
  }
  return undefined;
}

/** The credential the request carried, as words, and how to replace it. */
function credentialOf(place: RequestPlace): { what: string; fix: string } | undefined {
  const variables = place.keyVariable === undefined ? place.keyVariables : [place.keyVariable];
  if (place.keySent && variables.length > 0) {
    const names = variables.join(" or ");
    return {
      what: `the key from ${names}`,
      fix: `set ${names} (in the environment or .env) to a valid key for it`,
    };
  }
  const header = credentialHeaderNames(place.headers)[0];
  if (header !== undefined) {
    return {
      what: `the credential in header ${quoted(header)}`,
      fix: `correct that header under "providers.${place.provider}.headers" in the config`,
    };
  }
  if (place.keySent) return { what: "the key it was sent", fix: "replace that key" };
  return undefined;
}

function noKeyHint(place: RequestPlace, at: string): string {
  if (place.keyVariables.length === 0) {
    return `no key was sent to ${at}: name the variable that holds its key with "apiKeyEnv" ` +
      `under "providers.${place.provider}" in the config; ${DOCTOR}`;
  }
  return `no key was sent to ${at}: set ${place.keyVariables.join(" or ")} (in the ` +
    `environment or .env); ${DOCTOR}`;
}

/**
 * A note for a base URL whose path names no API version (`http://127.0.0.1:11434` where the
 * server answers at `/v1`), the most common wrong base URL; empty for any other.
 */
function versionNote(baseUrl: string): string {
  if (!URL.canParse(baseUrl) || /\/v\d/i.test(new URL(baseUrl).pathname)) return "";
  return "; it usually ends with the API's version, such as /v1";
}

/** The URL of the request, credentials in it hidden; the base URL when it cannot be joined. */
function askedUrl(place: RequestPlace): string {
  try {
    return shownUrl(apiUrl(place.baseUrl, API_PATHS[place.api]));
  } catch {
    return shownUrl(place.baseUrl);
  }
}

/** A value quoted, with any control character escaped, and clipped: a project may choose it. */
function quoted(value: string): string {
  return JSON.stringify(clip(value, MAX_QUOTED_CHARS));
}
