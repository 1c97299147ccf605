import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ConfigError, type VarSpec } from './config';
import type { GrpcTransport } from './grpc-tls-listener';

// How often the gRPC servers and clients read their TLS files (certificates, keys, CAs) for a
// change: cert-manager renews weeks ahead, and the kubelet takes a minute or two to update a
// mounted Secret.
export const GRPC_TLS_CHECK_MS = 30_000;

/** What the gRPC servers (campaign and recipient services) read: their own certificate, and their callers' CAs. */
export const GRPC_TLS_SERVER_CONFIG = {
  GRPC_TLS_CERT_FILE: {
    type: 'string',
    doc: "PEM file of this gRPC server's certificate (chain first to last), for the host name its callers use; with GRPC_TLS_KEY_FILE it serves gRPC over TLS only (unset: plaintext). Checked for a renewal every 30 s, which new connections are then served with, no restart needed",
  },
  GRPC_TLS_KEY_FILE: {
    type: 'string',
    secret: true,
    doc: 'PEM file of the private key of GRPC_TLS_CERT_FILE',
  },
  GRPC_TLS_ACCEPT_PLAINTEXT: {
    type: 'bool',
    default: false,
    doc: 'with GRPC_TLS_CERT_FILE, also accept plaintext gRPC on the same port, for the rollout that turns TLS on or off: callers may then speak either while their pods change',
  },
  GRPC_TLS_CLIENT_CA_FILE: {
    type: 'string',
    doc: "with GRPC_TLS_CERT_FILE, PEM file of the CA (or CAs) that signed the callers' certificates: every caller over TLS must then present a certificate it signed (mutual TLS), or its connection is refused (unset: none asked). Checked for a change every 30 s, like the certificate",
  },
  GRPC_TLS_CLIENT_NAMES: {
    type: 'string',
    doc: 'with GRPC_TLS_CLIENT_CA_FILE, the DNS names, comma-separated, of the services this server serves: a call whose client certificate bears none of them (as a subject alternative name), or that came in plaintext, is refused PERMISSION_DENIED, health checks included (unset: any certificate the client CAs signed)',
  },
} as const satisfies Record<string, VarSpec>;

/** A gRPC server's certificate and key, as `grpcServerTlsOf` read and checked them. */
export interface GrpcServerTls extends KeyPair {
  /** The files they were read from, read again for a renewal (see renewedGrpcServerTls). */
  certFile: string;
  keyFile: string;
  /** Whether plaintext callers are accepted too, on the same port (GRPC_TLS_ACCEPT_PLAINTEXT). */
  acceptPlaintext: boolean;
  /** The CAs a caller's certificate must be signed by (GRPC_TLS_CLIENT_CA_FILE); none asked without. */
  clientCa?: { file: string; pem: Buffer };
  /** The names, lower-cased, one of which a caller's certificate must bear (GRPC_TLS_CLIENT_NAMES); any without. */
  clientNames?: string[];
}

// A DNS name as a certificate bears it: labels of letters, digits and hyphens.
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** The names of GRPC_TLS_CLIENT_NAMES, lower-cased, with a problem for each that is no DNS name. */
function clientNamesIn(value: string, problems: string[]): string[] {
  const names = value
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '');
  for (const n of names)
    if (!DNS_NAME.test(n)) problems.push(`GRPC_TLS_CLIENT_NAMES holds "${n}", which is no DNS name`);
  if (names.length === 0) problems.push('GRPC_TLS_CLIENT_NAMES is set but names no service');
  return names;
}

/** Reads a file a variable names; a problem naming the variable when it cannot. */
function readNamed(name: string, file: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (err) {
    problems.push(`${name} (${file}) cannot be read: ${(err as Error).message}`);
    return undefined;
  }
}

/** The certificate in a file a variable names; a problem naming them when it holds none. */
function certificateIn(
  name: string,
  file: string,
  pem: Buffer,
  problems: string[],
): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    problems.push(`${name} (${file}) holds no PEM certificate`);
    return undefined;
  }
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The CA bundle in the file variable `name` names: every certificate in it parsed, so that a
 * bundle with one good certificate and one cut short is named at once rather than trusted
 * halfway; a ConfigError naming the problems otherwise.
 */
export function caBundleOf(name: string, file: string): { pem: Buffer; certificates: X509Certificate[] } {
  const problems: string[] = [];
  const pem = readNamed(name, file, problems);
  if (!pem) throw new ConfigError(problems);
  const blocks = pem.toString('latin1').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new ConfigError([`${name} (${file}) holds no PEM certificate`]);
  const certificates: X509Certificate[] = [];
  blocks.forEach((block, i) => {
    try {
      certificates.push(new X509Certificate(block));
    } catch {
      problems.push(`${name} (${file}): certificate ${i + 1} of ${blocks.length} cannot be parsed`);
    }
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return { pem, certificates };
}

/** A certificate and its private key, read from the files two variables name, and checked. */
export interface KeyPair {
  cert: Buffer;
  key: Buffer;
  /** When the (first) certificate stops being valid. */
  notAfter: Date;
}

/**
 * The certificate and key in the files the variables `names` name, or undefined with the problems
 * added: a file unreadable, no PEM certificate or key in it, a key not the certificate's, or a
 * certificate no longer valid.
 */
export function keyPairIn(
  names: { cert: string; key: string },
  files: { cert: string; key: string },
  problems: string[],
  now: Date,
): KeyPair | undefined {
  const before = problems.length;
  const cert = readNamed(names.cert, files.cert, problems);
  const key = readNamed(names.key, files.key, problems);
  const x509 = cert ? certificateIn(names.cert, files.cert, cert, problems) : undefined;
  if (key) {
    try {
      const privateKey = createPrivateKey(key);
      if (x509 && !x509.checkPrivateKey(privateKey))
        problems.push(`${names.key} is not the private key of the certificate in ${names.cert}`);
    } catch {
      problems.push(`${names.key} (${files.key}) holds no PEM private key`);
    }
  }
  if (x509 && Date.parse(x509.validTo) <= now.getTime())
    problems.push(`the certificate in ${names.cert} expired on ${new Date(x509.validTo).toISOString()}`);
  if (problems.length > before || !cert || !key || !x509) return undefined;
  return { cert, key, notAfter: new Date(x509.validTo) };
}

/**
 * A gRPC server's certificate and key (GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE), and the CAs of
 * its callers' certificates (GRPC_TLS_CLIENT_CA_FILE) and the names they must bear
 * (GRPC_TLS_CLIENT_NAMES), or undefined when none is set. One without the other, an unreadable
 * file, a file that is no PEM certificate or key, a key that is not the certificate's, or a
 * certificate no longer valid fails the start, every problem named at once; so do
 * GRPC_TLS_ACCEPT_PLAINTEXT, GRPC_TLS_CLIENT_CA_FILE and GRPC_TLS_CLIENT_NAMES without a
 * certificate, names without client CAs, and names that are no DNS names.
 */
export function grpcServerTlsOf(
  config: {
    GRPC_TLS_CERT_FILE?: string | undefined;
    GRPC_TLS_KEY_FILE?: string | undefined;
    GRPC_TLS_ACCEPT_PLAINTEXT?: boolean;
    GRPC_TLS_CLIENT_CA_FILE?: string | undefined;
    GRPC_TLS_CLIENT_NAMES?: string | undefined;
  },
  now: Date = new Date(),
): GrpcServerTls | undefined {
  const certFile = config.GRPC_TLS_CERT_FILE || undefined;
  const keyFile = config.GRPC_TLS_KEY_FILE || undefined;
  const clientCaFile = config.GRPC_TLS_CLIENT_CA_FILE || undefined;
  const clientNamesValue = config.GRPC_TLS_CLIENT_NAMES?.trim() || undefined;
  const acceptPlaintext = config.GRPC_TLS_ACCEPT_PLAINTEXT === true;
  if (certFile === undefined && keyFile === undefined) {
    // Most likely a rollout step with the certificate left out: said now, not found in a mixed fleet.
    const without = [
      acceptPlaintext && 'GRPC_TLS_ACCEPT_PLAINTEXT',
      clientCaFile && 'GRPC_TLS_CLIENT_CA_FILE',
      clientNamesValue && 'GRPC_TLS_CLIENT_NAMES',
    ].filter(Boolean);
    if (without.length > 0)
      throw new ConfigError(
        without.map((v) => `${v} is set without GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE`),
      );
    return undefined;
  }
  const problems: string[] = [];
  if (certFile === undefined) problems.push('GRPC_TLS_KEY_FILE is set without GRPC_TLS_CERT_FILE');
  if (keyFile === undefined) problems.push('GRPC_TLS_CERT_FILE is set without GRPC_TLS_KEY_FILE');
  const pair =
    certFile && keyFile
      ? keyPairIn(
          { cert: 'GRPC_TLS_CERT_FILE', key: 'GRPC_TLS_KEY_FILE' },
          { cert: certFile, key: keyFile },
          problems,
          now,
        )
      : undefined;
  let clientCa: GrpcServerTls['clientCa'];
  if (clientCaFile) {
    try {
      clientCa = { file: clientCaFile, pem: caBundleOf('GRPC_TLS_CLIENT_CA_FILE', clientCaFile).pem };
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  let clientNames: string[] | undefined;
  if (clientNamesValue) {
    if (!clientCaFile) problems.push('GRPC_TLS_CLIENT_NAMES is set without GRPC_TLS_CLIENT_CA_FILE');
    clientNames = clientNamesIn(clientNamesValue, problems);
  }
  if (problems.length > 0 || !pair || !certFile || !keyFile) throw new ConfigError(problems);
  return {
    ...pair,
    certFile,
    keyFile,
    acceptPlaintext,
    ...(clientCa ? { clientCa } : {}),
    ...(clientNames ? { clientNames } : {}),
  };
}

/**
 * The server's certificate, key and client CAs read again from their files: undefined while they
 * hold what `current` does; a ConfigError naming every problem when they no longer hold a valid
 * pair (a renewal half written, a certificate expired), which the server answers by keeping
 * `current`.
 */
export function renewedGrpcServerTls(
  current: GrpcServerTls,
  now: Date = new Date(),
): GrpcServerTls | undefined {
  const again = grpcServerTlsOf(
    {
      GRPC_TLS_CERT_FILE: current.certFile,
      GRPC_TLS_KEY_FILE: current.keyFile,
      GRPC_TLS_ACCEPT_PLAINTEXT: current.acceptPlaintext,
      GRPC_TLS_CLIENT_CA_FILE: current.clientCa?.file,
      GRPC_TLS_CLIENT_NAMES: current.clientNames?.join(','),
    },
    now,
  );
  if (!again) return undefined;
  const same =
    again.cert.equals(current.cert) &&
    again.key.equals(current.key) &&
    (again.clientCa?.pem ?? Buffer.alloc(0)).equals(current.clientCa?.pem ?? Buffer.alloc(0));
  return same ? undefined : again;
}

/**
 * The credentials a gRPC server binds with: TLS with its certificate, asking every caller for a
 * certificate its client CAs signed when it has them; else plaintext.
 */
export function grpcServerCredentials(tls: GrpcServerTls | undefined): ServerCredentials {
  if (!tls) return ServerCredentials.createInsecure();
  return ServerCredentials.createSsl(
    tls.clientCa?.pem ?? null,
    [{ cert_chain: tls.cert, private_key: tls.key }],
    tls.clientCa !== undefined,
  );
}

/**
 * Tells which problems of a series of checks to report (each check passes its problems, none
 * when it passed): those two checks in a row found, once while they last. A server reads its
 * certificate and key one after the other, and the kubelet may swap the files in between.
 */
export function lastingProblems(): (problems: readonly string[]) => boolean {
  let found = '';
  let reported = '';
  return (problems) => {
    const now = problems.join('\n');
    const report = now !== '' && now === found && now !== reported;
    if (report) reported = now;
    if (now === '') reported = '';
    found = now;
    return report;
  };
}

/**
 * One check of TLS files, for `runPeriodically`: `reread` reads them again and returns what
 * changed (undefined: nothing), handed to `changed`; when it throws a ConfigError (files holding
 * nothing valid, which leaves what was in use), `warning` is logged with the problems once two
 * checks in a row found them, and once only while they last (see lastingProblems).
 */
export function tlsFilesCheck<T>(
  reread: () => T | undefined,
  changed: (change: T) => void,
  logger: Logger,
  warning: string,
): () => Promise<void> {
  const worthLogging = lastingProblems();
  return async () => {
    let change: T | undefined;
    try {
      change = reread();
      worthLogging([]);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (worthLogging(err.problems)) logger.warn({ problems: err.problems }, warning);
      return;
    }
    if (change !== undefined) changed(change);
  };
}

/** The metric of when the certificate a gRPC server serves expires (see registerGrpcTlsMetrics). */
export const GRPC_TLS_EXPIRY_METRIC = 'grpc_server_tls_certificate_expiry_timestamp_seconds';

/** The metric of the connections to a gRPC server over TLS, by transport and outcome. */
export const GRPC_CONNECTIONS_METRIC = 'grpc_server_connections_by_transport_total';

/** The metrics of a gRPC server's TLS, as the server updates them. */
export interface GrpcTlsMetrics {
  /** Sets the expiry exported to that of the certificate now served (at start, after a renewal). */
  serving(tls: GrpcServerTls | undefined): void;
  /** Counts one connection by the transport its caller spoke, taken or refused. */
  connection(transport: GrpcTransport, taken: boolean): void;
}

/**
 * Exports when the certificate this gRPC server serves expires (0 for plaintext), so that a
 * renewal it has not taken up pages before callers start refusing it, and counts connections by
 * transport, so that a rollout can tell when no caller speaks plaintext any more.
 */
export function registerGrpcTlsMetrics(registry: Registry): GrpcTlsMetrics {
  const expiry = new Gauge({
    name: GRPC_TLS_EXPIRY_METRIC,
    help: 'When the TLS certificate this gRPC server serves new connections with expires, in seconds since the epoch (0: plaintext)',
    registers: [registry],
  });
  const connections = new Counter({
    name: GRPC_CONNECTIONS_METRIC,
    help: 'Connections to this gRPC server over TLS, by the transport the caller spoke and whether it was taken (outcome: taken, refused); plaintext ones are refused unless GRPC_TLS_ACCEPT_PLAINTEXT',
    labelNames: ['transport', 'outcome'],
    registers: [registry],
  });
  return {
    serving: (tls) => expiry.set(tls ? Math.floor(tls.notAfter.getTime() / 1000) : 0),
    connection: (transport, taken) => connections.inc({ transport, outcome: taken ? 'taken' : 'refused' }),
  };
}
