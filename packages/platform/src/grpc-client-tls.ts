import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type ChannelCredentials, credentials, experimental } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { ConfigError, type VarSpec } from './config';
import type { InternalCaller } from './grpc';
import { GRPC_TLS_CHECK_MS, lastingProblems } from './grpc-tls';
import type { Opened } from './lifecycle';
import { runPeriodically } from './periodic';

/** What every gRPC client reads: whether it speaks TLS to the gRPC servers, and whom it trusts. */
export const GRPC_TLS_CLIENT_CONFIG = {
  GRPC_TLS_CA_FILE: {
    type: 'string',
    doc: "PEM file of the CA (or CAs, one after the other) that signed the gRPC servers' certificates: gRPC calls between the services then go over TLS, each server's certificate checked against it and against the host name of the address called (unset: plaintext). Checked for a change every 30 s, which new connections then trust, no restart needed",
  },
} as const satisfies Record<string, VarSpec>;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * The CA bundle in GRPC_TLS_CA_FILE: every certificate in it parsed, so that a bundle with one
 * good certificate and one cut short is named at once rather than trusted halfway; a
 * ConfigError naming the problems otherwise.
 */
export function caBundleOf(file: string): { pem: Buffer; certificates: X509Certificate[] } {
  const name = 'GRPC_TLS_CA_FILE';
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new ConfigError([`${name} (${file}) cannot be read: ${(err as Error).message}`]);
  }
  const blocks = pem.toString('latin1').match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new ConfigError([`${name} (${file}) holds no PEM certificate`]);
  const problems: string[] = [];
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

/**
 * The CA bundle trusted, as grpc-js's channels ask for it: each new connection is made with the
 * latest one handed over, while the connections already open go on with theirs.
 */
class TrustedCa implements experimental.CertificateProvider {
  private readonly listeners = new Set<experimental.CaCertificateUpdateListener>();

  constructor(private pem: Buffer) {}

  /** Trusts `pem` for the connections made from now on. */
  trust(pem: Buffer): void {
    this.pem = pem;
    for (const listener of this.listeners) listener({ caCertificate: pem });
  }

  /** Whether `pem` is the bundle trusted now. */
  trusts(pem: Buffer): boolean {
    return pem.equals(this.pem);
  }

  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.listeners.add(listener);
    listener({ caCertificate: this.pem });
  }

  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.listeners.delete(listener);
  }

  // Clients present no certificate of their own: the internal token authenticates them.
  addIdentityCertificateListener(): void {}

  removeIdentityCertificateListener(): void {}
}

/** How this service's gRPC clients connect: over TLS trusting a CA bundle it can read again, or plaintext. */
export interface GrpcClientTransport {
  /** What every client of this service is made with. */
  credentials: ChannelCredentials;
  /**
   * Reads GRPC_TLS_CA_FILE again (nothing in plaintext): the new bundle when it changed, which
   * new connections now trust; undefined when unchanged; a ConfigError naming the problems when
   * it holds no valid bundle, which leaves the one before trusted.
   */
  reread(): X509Certificate[] | undefined;
}

/**
 * The gRPC clients' transport: TLS trusting GRPC_TLS_CA_FILE when it is set, else plaintext. A
 * file that is missing or holds no valid certificate fails the start, naming it.
 */
export function grpcClientTransport(config: { GRPC_TLS_CA_FILE?: string | undefined }): GrpcClientTransport {
  const file = config.GRPC_TLS_CA_FILE || undefined;
  if (file === undefined) return { credentials: credentials.createInsecure(), reread: () => undefined };
  const trusted = new TrustedCa(caBundleOf(file).pem);
  return {
    // null, not undefined: grpc-js waits for an identity forever unless told there is none.
    credentials: experimental.createCertificateProviderChannelCredentials(trusted, null),
    reread: () => {
      const bundle = caBundleOf(file);
      if (trusted.trusts(bundle.pem)) return undefined;
      trusted.trust(bundle.pem);
      return bundle.certificates;
    },
  };
}

/**
 * How this service calls the others: with its internal token, over `grpcClientTransport(config)`,
 * whose CA file is read again every 30 s (`checkMs`) until `opened` is closed: a changed bundle
 * is trusted by new connections, no restart needed; files without a valid one are logged once
 * two checks in a row found them, and leave the bundle before trusted.
 */
export function openInternalCaller(
  opened: Opened,
  config: { GRPC_TLS_CA_FILE?: string | undefined },
  token: string | undefined,
  logger: Logger,
  checkMs = GRPC_TLS_CHECK_MS,
): InternalCaller {
  const transport = grpcClientTransport(config);
  if (!config.GRPC_TLS_CA_FILE) return { token, credentials: transport.credentials };
  const worthLogging = lastingProblems();
  const check = async () => {
    let renewed: X509Certificate[] | undefined;
    try {
      renewed = transport.reread();
      worthLogging([]);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (worthLogging(err.problems))
        logger.warn(
          { problems: err.problems },
          'the gRPC CA file holds no valid certificate; new connections still trust the CA before',
        );
      return;
    }
    if (renewed)
      logger.info(
        { cas: renewed.map((c) => ({ subject: c.subject, notAfter: new Date(c.validTo).toISOString() })) },
        'new gRPC connections trust the changed CA file',
      );
  };
  opened.addStop(
    'grpc ca check',
    runPeriodically(check, checkMs, logger, 'checking the gRPC CA file failed'),
  );
  return { token, credentials: transport.credentials };
}
