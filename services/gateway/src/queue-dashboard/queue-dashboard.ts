import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import express, { type NextFunction, type Request, type Response } from "express";
import { createRedis, fleetOf, catalogView, Producer, QUEUES, waitForRedis } from "@svc/queues";
import { createLogger, excludeServerFromTracing, scrubText, scrubValue, type Logger } from "@svc/process";
import { loadGatewayConfig, type GatewayConfig } from "../config";

/**
 * The queue dashboard: Bull Board over the fleet's three queues, for operators,
 * on QUEUE_DASHBOARD_PORT (never the public API's port), behind its own Basic-auth
 * credentials. What it shows is limited to what may be shown: message data only
 * when it is exactly the catalog's ids (anything else is replaced, see
 * `redactedJob`), failure reasons, stack traces, return values and job logs
 * scrubbed of anything shaped like a phone number, an e-mail address or a key.
 * Read-only unless QUEUE_DASHBOARD_ACTIONS: then retrying, promoting and cleaning
 * jobs, and nothing else (no adding or editing messages, no emptying,
 * obliterating or pausing queues).
 */
export type QueueDashboard = { port: number; close(): Promise<void> };

export const QUEUE_DASHBOARD_BASE_PATH = "/queues";
/** Replaces message data the catalog does not allow (it could hold anything). */
export const HIDDEN_DATA = { hidden: "not shown: this message's data is not the job catalog's ids" };

/** Actions allowed with QUEUE_DASHBOARD_ACTIONS on (Bull Board's API routes under the base path). */
const ALLOWED_ACTIONS: ReadonlyArray<RegExp> = [
  /^\/api\/queues\/[^/]+\/retry\/(failed|completed)$/,
  /^\/api\/queues\/[^/]+\/promote$/,
  /^\/api\/queues\/[^/]+\/clean\/[a-z]+$/,
  /^\/api\/queues\/[^/]+\/[^/]+\/(retry|promote|clean)$/,
];

export async function startQueueDashboard(config: GatewayConfig, logger: Logger): Promise<QueueDashboard | null> {
  if (config.QUEUE_DASHBOARD_PORT === 0) return null;
  const actions = config.QUEUE_DASHBOARD_ACTIONS;
  // A producer-style connection: the board's requests fail at once while Redis is down.
  const redis = createRedis(config.REDIS_URL, "producer", "gateway-queue-dashboard");
  const queues = new Producer(redis, fleetOf(config), (err) => logger.warn({ err }, "queue dashboard: queue error"));
  // Not fatal: the board answers errors until Redis is back, the gateway keeps serving.
  await waitForRedis(redis).catch(() => logger.warn("queue dashboard: Redis not ready yet; the board answers errors until it is"));
  const board = new ExpressAdapter();
  board.setBasePath(QUEUE_DASHBOARD_BASE_PATH);
  createBullBoard({
    queues: Object.values(QUEUES).map((name) => new RedactingAdapter(queues.queue(name), { readOnlyMode: !actions, allowRetries: actions })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: "Queues", hideDocsLink: true } },
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  app.use(basicAuth(config.QUEUE_DASHBOARD_USER, config.QUEUE_DASHBOARD_PASSWORD ?? "", logger));
  app.use(QUEUE_DASHBOARD_BASE_PATH, allowedActions(actions));
  app.use(QUEUE_DASHBOARD_BASE_PATH, board.getRouter() as express.Router);
  app.get("/", (_req, res) => res.redirect(302, `${QUEUE_DASHBOARD_BASE_PATH}/`));

  const server: Server = createServer(app);
  excludeServerFromTracing(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.QUEUE_DASHBOARD_PORT, config.QUEUE_DASHBOARD_HOST, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.QUEUE_DASHBOARD_PORT;
  logger.info({ dashboardPort: port, host: config.QUEUE_DASHBOARD_HOST, actions }, `queue dashboard listening (${QUEUE_DASHBOARD_BASE_PATH})`);
  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await queues.close().catch(() => undefined);
      await redis.quit().catch(() => undefined);
    },
  };
}

/** The cluster primary's dashboard (WEB_CONCURRENCY > 1): one board per host, like the operations port. */
export async function startPrimaryQueueDashboard(): Promise<QueueDashboard | null> {
  const config = loadGatewayConfig();
  return startQueueDashboard(config, createLogger("gateway", config.LOG_LEVEL));
}

/**
 * HTTP Basic auth with the dashboard's own credentials. Both parts are compared
 * in constant time (as SHA-256 digests, so lengths do not leak either); a
 * failure is logged without what was sent.
 */
export function basicAuth(user: string, password: string, logger: Logger) {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  const expectedUser = digest(user);
  const expectedPassword = digest(password);
  return (req: Request, res: Response, next: NextFunction) => {
    const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? "");
    const decoded = m ? Buffer.from(m[1]!, "base64").toString("utf8") : "";
    const colon = decoded.indexOf(":");
    const given = colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    // Both comparisons always run: no early exit on a wrong user name.
    const userOk = timingSafeEqual(digest(given?.user ?? ""), expectedUser);
    const passwordOk = timingSafeEqual(digest(given?.password ?? ""), expectedPassword);
    if (given && userOk && passwordOk) return next();
    if (m) logger.warn({ path: req.path }, "queue dashboard: wrong credentials");
    res.set("WWW-Authenticate", 'Basic realm="queue dashboard", charset="UTF-8"');
    res.set("Cache-Control", "no-store");
    res.status(401).type("text/plain").send("401: the queue dashboard needs its credentials (QUEUE_DASHBOARD_USER / QUEUE_DASHBOARD_PASSWORD)\n");
  };
}

/**
 * Bull Board's read-only mode already refuses its actions; this is the second
 * lock, and the narrower list when actions are on: reads always, and with
 * QUEUE_DASHBOARD_ACTIONS only retry, promote and clean.
 */
function allowedActions(actions: boolean) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method === "GET" || req.method === "HEAD") return next();
    if (actions && req.method === "PUT" && ALLOWED_ACTIONS.some((r) => r.test(req.path))) return next();
    res.status(403).json({ error: actions ? "only retry, promote and clean are allowed from the queue dashboard" : "the queue dashboard is read-only (QUEUE_DASHBOARD_ACTIONS is off)" });
  };
}

type BoardJob = NonNullable<Awaited<ReturnType<BullMQAdapter["getJob"]>>>;

/**
 * Bull Board's adapter for BullMQ, with every job it hands the board replaced by
 * a redacted view (`redactedJob`), and job logs scrubbed.
 */
class RedactingAdapter extends BullMQAdapter {
  override async getJob(id: string): Promise<BoardJob | undefined> {
    const job = await super.getJob(id);
    return job ? redactedJob(job) : job;
  }

  override async getJobs(...args: Parameters<BullMQAdapter["getJobs"]>): Promise<BoardJob[]> {
    return (await super.getJobs(...args)).map(redactedJob);
  }

  override async getJobLogs(id: string): Promise<string[]> {
    return (await super.getJobLogs(id)).map(scrubText);
  }
}

/**
 * The job as the board sees it: the same object for its actions (retry, promote,
 * clean act on the real job through the prototype), but what it serialises is
 * redacted: data shown only when it is exactly the catalog's message for that
 * job name (ids and trace context), otherwise HIDDEN_DATA; the failure reason,
 * stack trace, return value and options scrubbed.
 */
export function redactedJob(job: BoardJob): BoardJob {
  const view = Object.create(job) as BoardJob;
  const toJSON = job.toJSON.bind(job);
  Object.defineProperty(view, "toJSON", {
    value: () => {
      const json = toJSON();
      return {
        ...json,
        data: catalogView(json.name, json.data) ?? HIDDEN_DATA,
        failedReason: typeof json.failedReason === "string" ? scrubText(json.failedReason) : json.failedReason,
        stacktrace: Array.isArray(json.stacktrace) ? json.stacktrace.map((line) => (typeof line === "string" ? scrubText(line) : line)) : json.stacktrace,
        returnvalue: scrubValue(json.returnvalue),
        opts: scrubValue(json.opts),
      };
    },
  });
  return view;
}
