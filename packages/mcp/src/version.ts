/** The package version (semver), reported to MCP clients at initialisation; a test keeps it equal to package.json. */
export const MCP_VERSION = "0.1.0";
