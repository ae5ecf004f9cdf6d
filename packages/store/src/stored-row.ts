import type { ResultRow } from "@svc/domain";

/**
 * A stored result row: `input` is only ever kept masked. Its own module, importing no
 * other store file, because lookups, jobs and the COPY renderer all read it.
 */
export type StoredRow = Omit<ResultRow, "input"> & { input_masked: string };
