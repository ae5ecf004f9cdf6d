/** One call of the examples' scenario (tests/docs/examples.test.ts) and the answer a test-mode gateway gave. */
export type RecordedCall = {
  operationId: string;
  /** The key it was sent with: the public sandbox key, a personal test key (webhooks need one), a key that does not exist, or none. */
  key: "sandbox" | "personal" | "wrong" | "none";
  method: "get" | "post" | "patch" | "delete";
  /** With the ids of that run. */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  status: number;
  contentType?: string;
  response: unknown;
};
