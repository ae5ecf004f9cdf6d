import { SingleBar } from "cli-progress";
import { LIMITS, type Client, type Job } from "@svc/sdk";
import { EXIT } from "./exit-codes";
import { err, stderrRaw } from "./output";

/**
 * Waits for a job to finish, showing where it is on stderr:
 * - stderr is a terminal: a live progress bar (cli-progress), fed by one long poll a
 *   second (the API's `wait=1`), so it moves while the job runs;
 * - anything else (a pipe, a file, CI): no bar, no control characters; a plain line
 *   whenever the job's status or progress changed, from the API's 30 s long poll
 *   (one request per 30 s at most, answered as soon as the job is final).
 * Ctrl-C stops waiting (exit 130) and leaves the job running.
 */
export async function waitWithProgress(client: Client, job: Job, opts: { progress: boolean }): Promise<Job> {
  const tty = process.stderr.isTTY === true && opts.progress;
  const bar = tty ? barFor(job) : null;
  const onSigint = () => {
    bar?.stop();
    err(`\nStopped waiting; ${job.id} keeps running. Follow it with: svc jobs watch ${job.id}`);
    process.exit(EXIT.interrupted);
  };
  process.once("SIGINT", onSigint);
  let lastLine = 0;
  const line = (j: Job) => {
    const p = j.progress;
    const pct = p.checks_total > 0 ? Math.floor((100 * p.done) / p.checks_total) : 0;
    err(`${j.id}: ${j.status}, ${p.done}/${p.checks_total} checks (${pct} %)`);
  };
  // Off a terminal the first long poll may hold for 30 s: say where the job is now.
  if (!bar && opts.progress) line(job);
  lastLine = Date.now();
  try {
    const done = await client.jobs.waitForJob(job.id, {
      pollWaitSeconds: tty ? 1 : LIMITS.maxWaitSeconds,
      onProgress: (j) => {
        if (bar) {
          if (j.progress.checks_total !== bar.getTotal()) bar.setTotal(Math.max(1, j.progress.checks_total));
          bar.update(j.progress.done, { status: j.status });
        } else if (opts.progress) {
          const now = Date.now();
          if (now - lastLine >= 1000 || j.finished_at) {
            lastLine = now;
            line(j);
          }
        }
      },
    });
    bar?.update(done.progress.done, { status: done.status });
    return done;
  } finally {
    bar?.stop();
    process.removeListener("SIGINT", onSigint);
  }
}

function barFor(job: Job): SingleBar {
  const bar = new SingleBar({
    // Frames go through `redact` like every other byte svc prints.
    // cli-progress only writes to its stream and reads isTTY/columns: frames go through `redact` like every other byte svc prints.
    stream: { write: stderrRaw, isTTY: true, get columns() { return process.stderr.columns; } } as unknown as NodeJS.WritableStream,
    format: `${job.id} {status} [{bar}] {percentage}% | {value}/{total} checks | ETA {eta_formatted}`,
    barCompleteChar: "█",
    barIncompleteChar: "░",
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 30,
    fps: 10,
  });
  bar.start(Math.max(1, job.progress.checks_total), job.progress.done, { status: job.status });
  return bar;
}

/** The exit code for a job someone waited for: completed is success, failed and cancelled are not. */
export const jobExitCode = (job: Job): number => (job.status === "completed" ? EXIT.ok : EXIT.negative);
