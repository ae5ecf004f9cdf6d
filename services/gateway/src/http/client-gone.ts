import type { Response } from "express";

/** An AbortSignal that fires when the client goes away before we answer. */
export function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
