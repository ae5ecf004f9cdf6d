import { SingleBar } from "cli-progress";

export type ProgressBar = { update(bytes: number, rows: number): void; stop(): void };

/**
 * A progress bar on stderr, only when stderr is a terminal (null otherwise); stdout
 * carries the result alone. `label` leads the line, e.g. `spam import ftc`.
 */
export function progressBar(total: number, label: string): ProgressBar | null {
  if (!process.stderr.isTTY) return null;
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${label} |{bar}| {percentage}% | {rows} rows | ETA {eta_formatted}`,
    hideCursor: true,
    clearOnComplete: false,
    fps: 10,
  });
  // Drawn from the first progress report on: a refused file (wrong header) leaves no empty bar behind.
  let started = false;
  return {
    update: (bytes, rows) => {
      if (!started) bar.start(Math.max(total, 1), 0, { rows: 0 });
      started = true;
      bar.update(Math.min(bytes, Math.max(total, 1)), { rows });
    },
    stop: () => {
      if (started) bar.stop();
    },
  };
}
