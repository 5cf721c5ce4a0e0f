/** Where each wire API takes a model request, under the provider's base URL. */
import type { ApiStyle } from "./model_info.ts";

/** The path each API style POSTs a request to, joined to the base URL by `apiUrl()`. */
export const API_PATHS: Readonly<Record<ApiStyle, string>> = {
  "openai": "/chat/completions",
  "openai-responses": "/responses",
  "anthropic": "/messages",
};
