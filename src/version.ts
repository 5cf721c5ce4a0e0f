/** tern's version, printed by `tern --version` and written into session headers. */
export const VERSION = "0.1.0";
