// @ts-self-types="./highlight_js.d.ts"
// Loads highlight.js with its common languages. A JavaScript module so that highlight.js's own
// type file (which pulls in the DOM library and changes the program's global types) is never
// read by the type checker: ./highlight_js.d.ts describes the part tern uses.
export { default } from "highlight.js/lib/common";
