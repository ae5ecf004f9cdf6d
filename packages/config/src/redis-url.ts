/**
 * Where Redis is, read from one setting (REDIS_URL) in one of two forms:
 *
 * - one server: `redis://[user:password@]host:port[/db]` (`rediss://` for TLS);
 * - a Redis Cluster: `redis+cluster://[user:password@]host:port,host:port,...`
 *   (`rediss+cluster://` for TLS). The nodes are seeds: the client learns the rest
 *   of the cluster from any one that answers, so two or three are enough.
 *
 * One setting rather than two (a URL and a node list) so a fleet can never be
 * configured with both and connect to the wrong one.
 */
export type RedisTarget =
  | { mode: "single"; url: string }
  | { mode: "cluster"; nodes: Array<{ host: string; port: number }>; username?: string; password?: string; tls: boolean };

const CLUSTER = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^@/?#]+)\/?$/;

/** Parses REDIS_URL; throws an Error whose message names the setting and what is wrong (never the password). */
export function parseRedisUrl(value: string, setting = "REDIS_URL"): RedisTarget {
  const cluster = CLUSTER.exec(value);
  if (cluster) {
    const [, scheme, userinfo, hostList] = cluster as unknown as [string, string, string | undefined, string];
    const nodes = hostList.split(",").map((entry, i) => parseNode(entry.trim(), i + 1, setting));
    let username: string | undefined;
    let password: string | undefined;
    if (userinfo !== undefined && userinfo !== "") {
      const colon = userinfo.indexOf(":");
      const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
      const pass = colon < 0 ? "" : userinfo.slice(colon + 1);
      if (user) username = decodeURIComponent(user);
      if (pass) password = decodeURIComponent(pass);
    }
    return { mode: "cluster", nodes, ...(username ? { username } : {}), ...(password ? { password } : {}), tls: scheme === "rediss" };
  }
  if (/^rediss?\+cluster:/.test(value)) {
    throw new Error(`${setting} must list the cluster's nodes as redis+cluster://[user:password@]host:port,host:port,...`);
  }
  if (!/^rediss?:\/\//.test(value)) {
    throw new Error(`${setting} must be redis://host:port (one server) or redis+cluster://host:port,host:port,... (a Redis Cluster)`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${setting} is not a valid URL (for a Redis Cluster use redis+cluster://host:port,host:port,...)`);
  }
  if (!url.hostname) throw new Error(`${setting} has no host`);
  return { mode: "single", url: value };
}

function parseNode(entry: string, position: number, setting: string): { host: string; port: number } {
  // host:port, or [ipv6]:port
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(entry);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port < 1 || port > 65535) {
    // The value itself is not echoed (settings are never printed; this one may sit next to a password).
    throw new Error(`${setting}: cluster node ${position} is not host:port (redis+cluster://host:port,host:port,...)`);
  }
  return { host: (match[1] as string).replace(/^\[|\]$/g, ""), port };
}

/** host:port of each node the setting names (default port filled in); never a user or password. */
export function redisAddresses(value: string): string {
  try {
    const target = parseRedisUrl(value);
    if (target.mode === "cluster") return target.nodes.map((n) => `${n.host.includes(":") ? `[${n.host}]` : n.host}:${n.port}`).join(",");
    const u = new URL(target.url);
    return `${u.hostname || "localhost"}:${u.port || "6379"}`;
  } catch {
    return "an unparsable address";
  }
}

/** The password a REDIS_URL carries, if any: for removing it from messages that might echo it. */
export function redisPassword(value: string): string {
  try {
    const target = parseRedisUrl(value);
    if (target.mode === "cluster") return target.password ?? "";
    return decodeURIComponent(new URL(target.url).password);
  } catch {
    return "";
  }
}
