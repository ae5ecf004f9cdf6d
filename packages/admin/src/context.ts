import type { Static, TObject } from "@svc/config";
import type { sourceRoutesEnv } from "@svc/sources";
import type { Store } from "@svc/store";

/**
 * What every command is given: the store, the key-hashing secret, the clock and the
 * check-worker's route settings. Its own
 * module, importing no command, so the commands and the table that names them
 * (commands.ts) do not import each other.
 */
export type CliContext = { store: Store; secret: string; now: () => Date; routes: SourceRoutesSettings };

/** The check-worker's route settings as this process read them (vendors, e-mail probe, DNS): what `doctor` judges. */
export type SourceRoutesSettings = Static<TObject<typeof sourceRoutesEnv>>;
