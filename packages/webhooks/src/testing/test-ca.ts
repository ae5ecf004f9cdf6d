import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export type TestCertificates = {
  /** PEM file of the CA: what WEBHOOK_EXTRA_CA_FILE points at. */
  caFile: string;
  caPem: string;
  /** Server key and certificate, valid for 127.0.0.1, ::1, localhost and the `extraNames`. */
  key: string;
  cert: string;
};

/**
 * A throw-away CA and a server certificate signed by it (P-256, valid two days),
 * made with the openssl CLI: receivers in tests and benchmarks speak real TLS and
 * the dispatcher trusts them only through its documented development setting.
 */
export function createTestCertificates(extraNames: string[] = ["hooks.example.com"]): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), "svc-webhook-ca-"));
  const f = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl("req", "-x509", ...ec, "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "2", "-subj", "/CN=svc webhook test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  openssl("req", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=localhost");
  const names = ["IP:127.0.0.1", "IP:::1", "DNS:localhost", ...extraNames.map((n) => `DNS:${n}`)];
  writeFileSync(f("ext.cnf"), `subjectAltName=${names.join(",")}\nextendedKeyUsage=serverAuth\n`);
  openssl("x509", "-req", "-in", f("server.csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial", "-out", f("server.pem"), "-days", "2", "-extfile", f("ext.cnf"));
  return { caFile: f("ca.pem"), caPem: readFileSync(f("ca.pem"), "utf8"), key: readFileSync(f("server.key"), "utf8"), cert: readFileSync(f("server.pem"), "utf8") };
}
