/**
 * The part of highlight.js tern uses. Its own type file references the DOM library, which
 * would change the global types of the whole program (streams, fetch), so these replace it.
 */
export interface HighlightResult {
  value: string;
}

export interface HighlightApi {
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): HighlightResult;
  getLanguage(name: string): object | undefined;
}

declare const hljs: HighlightApi;
export default hljs;
