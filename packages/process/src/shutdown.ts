import type { Logger } from "./logger";
import { shutdownTracing } from "./tracing/api";

type Handler = { name: string; order: number; run: () => Promise<void> | void };

/**
 * One registry of named shutdown steps, run in ascending `order` (stop accepting,
 * drain, close queues, Redis, database) within a deadline. A second signal or the
 * deadline forces exit with a non-zero status so orchestrators never hang.
 */
export class ShutdownManager {
  private readonly handlers: Handler[] = [];
  private shuttingDown = false;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  register(name: string, order: number, run: () => Promise<void> | void): void {
    this.handlers.push({ name, order, run });
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  listen(signals: NodeJS.Signals[] = ["SIGTERM", "SIGINT"]): void {
    for (const signal of signals) {
      process.on(signal, () => {
        if (this.shuttingDown) {
          this.logger.warn({ signal }, "second signal during shutdown, exiting now");
          this.exit(1);
          return;
        }
        void this.shutdown(signal);
      });
    }
  }

  async shutdown(reason: string): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    this.logger.info({ reason }, "shutting down");
    const deadline = setTimeout(() => {
      this.logger.error({ timeoutMs: this.timeoutMs }, "shutdown deadline passed, forcing exit");
      this.exit(1);
    }, this.timeoutMs);
    let failed = false;
    for (const h of [...this.handlers].sort((a, b) => a.order - b.order)) {
      const started = Date.now();
      try {
        await h.run();
        this.logger.info({ step: h.name, ms: Date.now() - started }, "shutdown step done");
      } catch (err) {
        failed = true;
        this.logger.error({ step: h.name, err }, "shutdown step failed");
      }
    }
    // Spans of the work just finished are still buffered: export them (a no-op with tracing off).
    await shutdownTracing();
    clearTimeout(deadline);
    this.logger.info("shutdown complete");
    this.logger.flush?.();
    this.exit(failed ? 1 : 0);
  }
}
