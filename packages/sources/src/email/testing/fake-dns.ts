import dgram from "node:dgram";
import net from "node:net";

/**
 * A tiny authoritative DNS responder on 127.0.0.1 UDP for tests (never a real
 * resolver). Answers MX, A and AAAA from a zone table; names not in the table get
 * NXDOMAIN, a name with `rcode: "SERVFAIL"` gets SERVFAIL, a `silent` name gets no
 * answer at all (the client times out), a known name without records of the
 * asked type gets NOERROR with no answers (NODATA).
 */
export type ZoneEntry = {
  mx?: Array<{ preference: number; exchange: string }>;
  a?: string[];
  aaaa?: string[];
  rcode?: "SERVFAIL" | "REFUSED";
  silent?: boolean;
};

const TYPE = { A: 1, MX: 15, AAAA: 28 } as const;
const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export class FakeDnsServer {
  private socket: dgram.Socket | null = null;
  readonly queries: Array<{ name: string; type: number }> = [];

  constructor(public zone: Record<string, ZoneEntry>) {}

  async start(): Promise<string> {
    const socket = dgram.createSocket("udp4");
    socket.on("message", (msg, rinfo) => {
      const reply = this.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(0, "127.0.0.1", () => resolve());
    });
    this.socket = socket;
    return `127.0.0.1:${socket.address().port}`;
  }

  async stop(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  private answer(msg: Buffer): Buffer | null {
    if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
    let offset = 12;
    const labels: string[] = [];
    for (;;) {
      const len = msg[offset];
      if (len === undefined) return null;
      offset += 1;
      if (len === 0) break;
      labels.push(msg.subarray(offset, offset + len).toString("ascii"));
      offset += len;
    }
    const type = msg.readUInt16BE(offset);
    const question = msg.subarray(12, offset + 4);
    const name = labels.join(".").toLowerCase();
    this.queries.push({ name, type });
    const entry = this.zone[name];
    if (entry?.silent) return null;

    const answers: Buffer[] = [];
    let rcode: number = RCODE.NOERROR;
    if (!entry) rcode = RCODE.NXDOMAIN;
    else if (entry.rcode) rcode = RCODE[entry.rcode];
    else if (type === TYPE.MX) for (const mx of entry.mx ?? []) answers.push(record(TYPE.MX, Buffer.concat([u16(mx.preference), encodeName(mx.exchange)])));
    else if (type === TYPE.A) for (const ip of entry.a ?? []) answers.push(record(TYPE.A, Buffer.from(ip.split(".").map(Number))));
    else if (type === TYPE.AAAA) for (const ip of entry.aaaa ?? []) answers.push(record(TYPE.AAAA, ipv6Bytes(ip)));

    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0); // id
    const rd = msg.readUInt16BE(2) & 0x0100;
    header.writeUInt16BE(0x8000 | 0x0400 | rd | 0x0080 | rcode, 2); // QR, AA, RD copied, RA, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    return Buffer.concat([header, question, ...answers]);
  }
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function encodeName(name: string): Buffer {
  const parts = name.split(".").filter((l) => l.length > 0);
  return Buffer.concat([...parts.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, "ascii")])), Buffer.from([0])]);
}

/** An answer record whose owner is the question name (compression pointer to offset 12). */
function record(type: number, rdata: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt16BE(0xc00c, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(1, 4); // IN
  head.writeUInt32BE(60, 6); // TTL
  head.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([head, rdata]);
}

function ipv6Bytes(ip: string): Buffer {
  if (net.isIPv6(ip) === false) throw new Error(`not an IPv6 address: ${ip}`);
  const [head = "", tail = ""] = ip.split("::");
  const h = head ? head.split(":") : [];
  const t = ip.includes("::") && tail ? tail.split(":") : [];
  const groups = ip.includes("::") ? [...h, ...Array<string>(8 - h.length - t.length).fill("0"), ...t] : h;
  return Buffer.concat(groups.map((g) => u16(parseInt(g, 16))));
}
