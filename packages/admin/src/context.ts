import type { Store } from "@svc/store";

/**
 * What every command is given: the store, the key-hashing secret and the clock. Its own
 * module, importing no command, so the commands and the table that names them
 * (commands.ts) do not import each other.
 */
export type CliContext = { store: Store; secret: string; now: () => Date };
