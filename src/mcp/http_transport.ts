/**
 * The SDK's Streamable HTTP client transport, behind one import so its typing workaround lives
 * in one place: the `.js` subpath resolves at run time, the extensionless one has the types.
 */
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
