import path from "node:path";
import { Worker } from "node:worker_threads";
import { parseNumber, type ParsedNumber } from "@svc/domain";

/**
 * Number validation is the CPU floor of a 50,000-row job (libphonenumber: tens of
 * microseconds a number). Big lists are split between this thread and helper
 * threads; small ones are parsed inline, where a thread hop would cost more.
 */
const PARALLEL_FROM = 5_000;

/** The built domain package (threads run plain JavaScript, also under the test runner). */
const DOMAIN_ENTRY = path.join(path.dirname(require.resolve("@svc/domain/package.json")), "dist", "index.js");

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { parseNumber } = require(${JSON.stringify(DOMAIN_ENTRY)});
parentPort.on("message", ({ id, inputs }) => {
  parentPort.postMessage({ id, parsed: inputs.map((i) => parseNumber(i)) });
});`;

export class ParsePool {
  private readonly workers: Worker[] = [];
  private next = 0;
  private seq = 0;
  private readonly waiting = new Map<number, (parsed: ParsedNumber[]) => void>();

  constructor(threads: number) {
    for (let i = 0; i < threads; i += 1) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.unref();
      worker.on("message", ({ id, parsed }: { id: number; parsed: ParsedNumber[] }) => {
        this.waiting.get(id)?.(parsed);
        this.waiting.delete(id);
      });
      this.workers.push(worker);
    }
  }

  private onWorker(inputs: string[]): Promise<ParsedNumber[]> {
    const worker = this.workers[this.next++ % this.workers.length] as Worker;
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      worker.postMessage({ id, inputs });
    });
  }

  /** Parses `inputs` (numbers given with their country code), in order. */
  async parse(inputs: readonly string[]): Promise<ParsedNumber[]> {
    if (this.workers.length === 0 || inputs.length < PARALLEL_FROM) return inputs.map((i) => parseNumber(i));
    const parts = this.workers.length + 1;
    const size = Math.ceil(inputs.length / parts);
    const remote = this.workers.map((_, w) => this.onWorker(inputs.slice((w + 1) * size, (w + 2) * size)));
    const local = inputs.slice(0, size).map((i) => parseNumber(i));
    return [...local, ...(await Promise.all(remote)).flat()];
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
