import { DnsError, DnsResolver } from "./dns";
import { FakeDnsServer } from "./testing/fake-dns";

const dns = new FakeDnsServer({
  "multi.test": {
    mx: [
      { preference: 20, exchange: "MX3.Multi.Test" },
      { preference: 10, exchange: "mx1.multi.test" },
      { preference: 10, exchange: "mx2.multi.test" },
    ],
  },
  "host.test": { a: ["192.0.2.10", "192.0.2.11"], aaaa: ["2001:db8::1"] },
  "v6only.test": { aaaa: ["2001:db8::2"] },
  "nullmx.test": { mx: [{ preference: 0, exchange: "." }] },
  "empty.test": {},
  "servfail.test": { rcode: "SERVFAIL" },
  "silent.test": { silent: true },
});
let server: string;

beforeAll(async () => {
  server = await dns.start();
});
afterAll(() => dns.stop());

const resolver = (timeoutMs = 300) => new DnsResolver({ servers: [server], timeoutMs, tries: 1 });

async function failure(p: Promise<unknown>): Promise<DnsError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DnsError);
  return err as DnsError;
}

describe("DnsResolver against a loopback DNS server", () => {
  it("returns MX records sorted by priority, equal priorities in answer order, names normalised", async () => {
    await expect(resolver().mx("multi.test")).resolves.toEqual([
      { exchange: "mx1.multi.test", priority: 10 },
      { exchange: "mx2.multi.test", priority: 10 },
      { exchange: "mx3.multi.test", priority: 20 },
    ]);
  });

  it("returns A addresses before AAAA addresses", async () => {
    await expect(resolver().addresses("host.test")).resolves.toEqual(["192.0.2.10", "192.0.2.11", "2001:db8::1"]);
    await expect(resolver().addresses("v6only.test")).resolves.toEqual(["2001:db8::2"]);
  });

  it("reports a null MX as a single record with an empty exchange", async () => {
    await expect(resolver().mx("nullmx.test")).resolves.toEqual([{ exchange: "", priority: 0 }]);
  });

  it("returns an empty list when the name exists but has no records of the type (NODATA)", async () => {
    await expect(resolver().mx("empty.test")).resolves.toEqual([]);
    await expect(resolver().addresses("empty.test")).resolves.toEqual([]);
    await expect(resolver().mx("host.test")).resolves.toEqual([]);
  });

  it("tells NXDOMAIN (permanent) apart from SERVFAIL and timeouts (temporary)", async () => {
    const nx = await failure(resolver().mx("missing.test"));
    expect([nx.kind, nx.code, nx.permanent]).toEqual(["nxdomain", "ENOTFOUND", true]);
    const nxAddr = await failure(resolver().addresses("missing.test"));
    expect(nxAddr.kind).toBe("nxdomain");

    const servfail = await failure(resolver().mx("servfail.test"));
    expect([servfail.kind, servfail.code, servfail.permanent]).toEqual(["temporary", "ESERVFAIL", false]);

    const started = Date.now();
    const timeout = await failure(resolver(200).mx("silent.test"));
    expect([timeout.kind, timeout.code, timeout.permanent]).toEqual(["temporary", "ETIMEOUT", false]);
    expect(Date.now() - started).toBeLessThan(2_000);
    const timeoutAddr = await failure(resolver(200).addresses("silent.test"));
    expect(timeoutAddr.kind).toBe("temporary");
  });

  it("reports a resolver that is not listening as unreachable", async () => {
    const closed = await closedUdpPort();
    const err = await failure(new DnsResolver({ servers: [`127.0.0.1:${closed}`], timeoutMs: 300, tries: 1 }).mx("multi.test"));
    expect(err.kind).toBe("unreachable");
  });

  it("cancels a query when the signal fires, and refuses to start on an aborted signal", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const err = await failure(resolver(5_000).mx("silent.test", controller.signal));
    expect(err.kind).toBe("cancelled");
    expect(Date.now() - started).toBeLessThan(1_500);

    const before = dns.queries.length;
    const early = await failure(resolver().addresses("host.test", AbortSignal.abort()));
    expect(early.kind).toBe("cancelled");
    expect(dns.queries.length).toBe(before);
  });

  it("asks the configured server (it saw the query) and rejects a malformed server list", async () => {
    dns.queries.length = 0;
    await resolver().mx("multi.test");
    expect(dns.queries).toEqual([{ name: "multi.test", type: 15 }]);
    expect(() => new DnsResolver({ servers: ["not an address"] })).toThrow();
  });
});

async function closedUdpPort(): Promise<number> {
  const dgram = await import("node:dgram");
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
