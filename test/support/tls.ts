// Certificates made at test time with openssl: a CA, a server certificate for 127.0.0.1 signed by
// it, a client certificate signed by it, and a stranger's client certificate from another CA.
// Real mutual TLS in tests, nothing committed.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after } from "node:test";

export type Pem = { cert: string; key: string; cert_file: string; key_file: string };
export type TestCertificates = {
  dir: string;
  ca_file: string;
  ca: string;
  server: Pem;
  client: Pem;
  /** Signed by another CA: the SM-DP+ must refuse it. */
  stranger: Pem;
};

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

function newCa(dir: string, name: string): void {
  openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
    ],
    dir,
  );
}

function signed(dir: string, ca: string, name: string, extensions: string): Pem {
  openssl(
    [
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      `/CN=${name}`,
    ],
    dir,
  );
  writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${ca}.pem`,
      "-CAkey",
      `${ca}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`,
    ],
    dir,
  );
  const cert_file = path.join(dir, `${name}.pem`);
  const key_file = path.join(dir, `${name}.key`);
  return { cert: readFileSync(cert_file, "utf8"), key: readFileSync(key_file, "utf8"), cert_file, key_file };
}

/** `removeAfterTests: false` (plain scripts): the caller removes `dir` itself. */
export function makeCertificates(options: { removeAfterTests?: boolean } = {}): TestCertificates {
  const dir = mkdtempSync(path.join(tmpdir(), "es2plus-tls-"));
  if (options.removeAfterTests !== false) after(() => rmSync(dir, { recursive: true, force: true }));
  newCa(dir, "test-ca");
  newCa(dir, "stranger-ca");
  const server = signed(
    dir,
    "test-ca",
    "smdp",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  const client = signed(dir, "test-ca", "operator", "extendedKeyUsage=clientAuth\n");
  const stranger = signed(dir, "stranger-ca", "stranger", "extendedKeyUsage=clientAuth\n");
  const ca_file = path.join(dir, "test-ca.pem");
  return { dir, ca_file, ca: readFileSync(ca_file, "utf8"), server, client, stranger };
}
