import { createServer } from "node:net";
import { WebhookTransport, directConnector, type Connector } from "./deliver";
import { parseRanges } from "@svc/domain";
import type { Resolve } from "./url-check";
import { createTestCertificates } from "./testing/test-ca";
import { WebhookReceiver } from "./testing/receiver";

const certs = createTestCertificates();
const receiver = new WebhookReceiver(certs);
const loopbackPolicy = { allowedPrivate: parseRanges(["127.0.0.0/8"]) };
const noDns: Resolve = async () => {
  throw new Error("no resolving in this test");
};
const transports: WebhookTransport[] = [];

function transport(opts: Partial<ConstructorParameters<typeof WebhookTransport>[0]> = {}): WebhookTransport {
  const t = new WebhookTransport({ resolve: noDns, policy: loopbackPolicy, extraCa: [certs.caPem], ...opts });
  transports.push(t);
  return t;
}

const post = (t: WebhookTransport, url = receiver.url()) => t.deliver({ url, headers: { "content-type": "application/json", "webhook-id": "evt_1" }, body: '{"hello":"world"}' });

beforeAll(() => receiver.start());
afterEach(() => {
  receiver.reply = (_r, res) => void res.writeHead(200).end("ok");
});
afterAll(async () => {
  for (const t of transports) t.close();
  await receiver.close();
});

describe("webhook transport", () => {
  test("posts the body and headers over TLS and reports a 2xx as success", async () => {
    const before = receiver.requests.length;
    const outcome = await post(transport());
    expect(outcome).toMatchObject({ ok: true, statusCode: 200, error: null });
    const got = receiver.requests[before];
    expect(got?.body).toBe('{"hello":"world"}');
    expect(got?.headers["webhook-id"]).toBe("evt_1");
    expect(got?.path).toBe("/hooks");
  });

  test("any non-2xx status is a failure", async () => {
    receiver.reply = (_r, res) => void res.writeHead(503).end("busy");
    expect(await post(transport())).toMatchObject({ ok: false, statusCode: 503, error: "http_error" });
    receiver.reply = (_r, res) => void res.writeHead(100 + 304).end();
    expect(await post(transport())).toMatchObject({ ok: false, statusCode: 404, error: "http_error" });
  });

  test("a redirect is a failure and is not followed", async () => {
    receiver.reply = (_r, res) => void res.writeHead(307, { location: receiver.url("/elsewhere") }).end();
    const before = receiver.requests.length;
    expect(await post(transport())).toMatchObject({ ok: false, statusCode: 307, error: "redirect" });
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests.slice(before).map((r) => r.path)).toEqual(["/hooks"]);
  });

  test("no answer within the deadline is a timeout", async () => {
    receiver.reply = () => undefined; // never answers
    const outcome = await post(transport({ timeoutMs: 300 }));
    expect(outcome).toMatchObject({ ok: false, statusCode: null, error: "timeout" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
    expect(outcome.durationMs).toBeLessThan(2_000);
  });

  test("the default deadline is 10 seconds", async () => {
    receiver.reply = (_r, res) => void setTimeout(() => res.writeHead(200).end(), 10_500);
    const outcome = await post(transport());
    expect(outcome.error).toBe("timeout");
    expect(outcome.durationMs).toBeGreaterThanOrEqual(9_950);
    expect(outcome.durationMs).toBeLessThan(10_500);
  }, 20_000);

  test("a response body over 64 KB is cut off: the connection is dropped, the 2xx still counts", async () => {
    let finished: boolean | undefined;
    receiver.reply = (_r, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      const chunk = Buffer.alloc(16 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 50 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => (finished = res.writableFinished));
      pump();
    };
    const outcome = await post(transport());
    expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
    await new Promise((r) => setTimeout(r, 300));
    expect(finished).toBe(false);
  });

  test("an untrusted certificate is a TLS failure (the extra CA is opt-in)", async () => {
    expect(await post(transport({ extraCa: [] }))).toMatchObject({ ok: false, error: "tls_error" });
  });

  test("a closed port is a connection failure", async () => {
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, "127.0.0.1", r));
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    expect(await post(transport(), `https://127.0.0.1:${port}/hooks`)).toMatchObject({ ok: false, error: "connection_refused" });
  });

  test("loopback is refused without the development setting, before any connection", async () => {
    const dialled: string[] = [];
    const t = transport({ policy: {}, connect: (target) => (dialled.push(target.address), directConnector(target)) });
    expect(await post(t)).toMatchObject({ ok: false, error: "url_refused", statusCode: null });
    expect(dialled).toEqual([]);
  });

  describe("a public host name (injected resolver and connector; nothing leaves this machine)", () => {
    let answers: string[];
    const resolve: Resolve = async (host) => (host === "hooks.example.com" ? answers : []);
    const dialled: string[] = [];
    // "Public" addresses are mapped to the local receiver; the certificate names hooks.example.com.
    const toReceiver: Connector = ({ address }) => (dialled.push(address), directConnector({ address: "127.0.0.1", port: receiver.port }));

    beforeEach(() => {
      dialled.length = 0;
    });

    test("is delivered by connecting to the checked address, with the host name for TLS", async () => {
      answers = ["93.184.215.14"];
      const outcome = await post(transport({ resolve, connect: toReceiver, policy: {} }), "https://hooks.example.com/in");
      expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
      expect(dialled).toEqual(["93.184.215.14"]);
      expect(receiver.requests.at(-1)?.headers.host).toBe("hooks.example.com");
    });

    test("is checked again at every attempt: a host now resolving to a private address is refused, no connection made", async () => {
      const t = transport({ resolve, connect: toReceiver, policy: {} });
      answers = ["93.184.215.14"];
      expect((await post(t, "https://hooks.example.com/in")).ok).toBe(true);
      answers = ["10.0.0.5"];
      expect(await post(t, "https://hooks.example.com/in")).toMatchObject({ ok: false, error: "url_refused" });
      answers = ["93.184.215.14", "169.254.169.254"];
      expect(await post(t, "https://hooks.example.com/in")).toMatchObject({ ok: false, error: "url_refused" });
      expect(dialled).toEqual(["93.184.215.14"]);
    });

    test("a pooled connection is not reused for a different address", async () => {
      const t = transport({ resolve, connect: toReceiver, policy: {} });
      answers = ["93.184.215.14"];
      await post(t, "https://hooks.example.com/in");
      await post(t, "https://hooks.example.com/in");
      answers = ["93.184.215.15"];
      await post(t, "https://hooks.example.com/in");
      expect(dialled).toEqual(["93.184.215.14", "93.184.215.15"]);
    });

    test("a host that does not resolve is a DNS failure", async () => {
      answers = [];
      expect(await post(transport({ resolve, connect: toReceiver, policy: {} }), "https://hooks.example.com/in")).toMatchObject({ ok: false, error: "dns_error" });
    });
  });
});
