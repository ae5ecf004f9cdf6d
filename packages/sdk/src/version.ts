/** This package's version (kept equal to package.json by a test). */
export const SDK_VERSION = "0.1.0";
