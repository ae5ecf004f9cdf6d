/**
 * What an API key looks like, defined once: `svc_<mode>_`, then 30 base62 characters
 * of body and a 6-character base62 checksum (GitHub's token layout). The gateway
 * parses keys with it (api-key.ts); the SDK, which bundles the contract, hands the
 * same definition to the CLI, the MCP server and its users. No node: imports here,
 * so the SDK's browser build can carry it.
 */
export const API_KEY_MODES = ["test", "live", "agent"] as const;
export const API_KEY_BODY_LENGTH = 30;
export const API_KEY_CHECKSUM_LENGTH = 6;

/** The prefix as a RegExp source, unanchored, group 1 the mode: for patterns that look for keys inside text. */
export const API_KEY_PREFIX_SOURCE = `svc_(${API_KEY_MODES.join("|")})_`;

/** A string starting with a key's documented prefix; group 1 is the mode. */
export const API_KEY_PREFIX_PATTERN = new RegExp(`^${API_KEY_PREFIX_SOURCE}`);

/** A whole key by its shape (groups: mode, body, checksum); `parseApiKey` also checks the checksum. */
export const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX_SOURCE}([0-9A-Za-z]{${API_KEY_BODY_LENGTH}})([0-9A-Za-z]{${API_KEY_CHECKSUM_LENGTH}})$`);
