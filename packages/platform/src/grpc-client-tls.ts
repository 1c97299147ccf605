import type { X509Certificate } from 'node:crypto';
import { type ChannelCredentials, credentials, experimental } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { ConfigError, type VarSpec } from './config';
import type { InternalCaller } from './grpc';
import { caBundleOf, GRPC_TLS_CHECK_MS, type KeyPair, keyPairIn, tlsFilesCheck } from './grpc-tls';
import type { Opened } from './lifecycle';
import { runPeriodically } from './periodic';

/** What every gRPC client reads: whether it speaks TLS to the gRPC servers, whom it trusts, and what it presents. */
export const GRPC_TLS_CLIENT_CONFIG = {
  GRPC_TLS_CA_FILE: {
    type: 'string',
    doc: "PEM file of the CA (or CAs, one after the other) that signed the gRPC servers' certificates: gRPC calls between the services then go over TLS, each server's certificate checked against it and against the host name of the address called (unset: plaintext). Checked for a change every 30 s, which new connections then trust, no restart needed",
  },
  GRPC_TLS_CLIENT_CERT_FILE: {
    type: 'string',
    doc: 'with GRPC_TLS_CA_FILE, PEM file of the certificate (made for client authentication) this service presents to gRPC servers that ask for one (GRPC_TLS_CLIENT_CA_FILE); with GRPC_TLS_CLIENT_KEY_FILE. Checked for a renewal every 30 s, which new connections then present',
  },
  GRPC_TLS_CLIENT_KEY_FILE: {
    type: 'string',
    secret: true,
    doc: 'PEM file of the private key of GRPC_TLS_CLIENT_CERT_FILE',
  },
} as const satisfies Record<string, VarSpec>;

type ClientTlsConfig = {
  GRPC_TLS_CA_FILE?: string | undefined;
  GRPC_TLS_CLIENT_CERT_FILE?: string | undefined;
  GRPC_TLS_CLIENT_KEY_FILE?: string | undefined;
};

const IDENTITY = { cert: 'GRPC_TLS_CLIENT_CERT_FILE', key: 'GRPC_TLS_CLIENT_KEY_FILE' };

/**
 * The CA bundle trusted and the certificate presented, as grpc-js's channels ask for them: each
 * new connection is made with the latest ones handed over, while the connections already open go
 * on with theirs.
 */
class ClientTlsFiles implements experimental.CertificateProvider {
  private readonly caListeners = new Set<experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<experimental.IdentityCertificateUpdateListener>();

  constructor(
    private ca: Buffer,
    private identity: KeyPair | undefined,
  ) {}

  /** Trusts `pem` for the connections made from now on; false when it is the bundle trusted already. */
  trust(pem: Buffer): boolean {
    if (pem.equals(this.ca)) return false;
    this.ca = pem;
    for (const listener of this.caListeners) listener({ caCertificate: pem });
    return true;
  }

  /** The certificate and key presented to new connections; undefined when none is. */
  get presented(): KeyPair | undefined {
    return this.identity;
  }

  /** Presents `pair` on the connections made from now on; false when it is the pair presented already. */
  present(pair: KeyPair): boolean {
    if (this.identity && pair.cert.equals(this.identity.cert) && pair.key.equals(this.identity.key))
      return false;
    this.identity = pair;
    for (const listener of this.identityListeners) listener({ certificate: pair.cert, privateKey: pair.key });
    return true;
  }

  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    listener({ caCertificate: this.ca });
  }

  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    if (this.identity) listener({ certificate: this.identity.cert, privateKey: this.identity.key });
  }

  removeIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
  }
}

/** What a new read of the client's TLS files changed for the connections made from now on. */
export interface ClientTlsChange {
  /** The CA bundle now trusted, when it changed. */
  cas?: X509Certificate[];
  /** The certificate now presented, when it changed. */
  identity?: KeyPair;
}

/** How this service's gRPC clients connect: over TLS with files it can read again, or plaintext. */
export interface GrpcClientTransport {
  /** What every client of this service is made with. */
  credentials: ChannelCredentials;
  /** The certificate presented to new connections (mutual TLS); undefined when none is. */
  presented(): KeyPair | undefined;
  /**
   * Reads the files again (nothing in plaintext): what changed, which new connections now use;
   * undefined when nothing did; a ConfigError naming the problems when a file holds nothing
   * valid, which leaves all as it was.
   */
  reread(): ClientTlsChange | undefined;
}

/** The client certificate and key of `config`, or undefined with neither set; problems named otherwise. */
function identityOf(config: ClientTlsConfig, problems: string[], now: Date): KeyPair | undefined {
  const cert = config.GRPC_TLS_CLIENT_CERT_FILE || undefined;
  const key = config.GRPC_TLS_CLIENT_KEY_FILE || undefined;
  if (!cert && !key) return undefined;
  if (!config.GRPC_TLS_CA_FILE) problems.push('GRPC_TLS_CLIENT_CERT_FILE is set without GRPC_TLS_CA_FILE');
  if (!cert) problems.push('GRPC_TLS_CLIENT_KEY_FILE is set without GRPC_TLS_CLIENT_CERT_FILE');
  if (!key) problems.push('GRPC_TLS_CLIENT_CERT_FILE is set without GRPC_TLS_CLIENT_KEY_FILE');
  return cert && key ? keyPairIn(IDENTITY, { cert, key }, problems, now) : undefined;
}

/** The CA bundle of `file`, with its problems added rather than thrown. */
function caBundleIn(file: string, problems: string[]) {
  try {
    return caBundleOf('GRPC_TLS_CA_FILE', file);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}

/**
 * The gRPC clients' transport: TLS trusting GRPC_TLS_CA_FILE when it is set, presenting
 * GRPC_TLS_CLIENT_CERT_FILE when that is set too, else plaintext. A file that is missing or holds
 * nothing valid fails the start, every problem named.
 */
export function grpcClientTransport(
  config: ClientTlsConfig,
  now: () => Date = () => new Date(),
): GrpcClientTransport {
  const problems: string[] = [];
  const identity = identityOf(config, problems, now());
  const caFile = config.GRPC_TLS_CA_FILE || undefined;
  const bundle = caFile ? caBundleIn(caFile, problems) : undefined;
  if (problems.length > 0) throw new ConfigError(problems);
  if (!caFile || !bundle)
    return { credentials: credentials.createInsecure(), presented: () => undefined, reread: () => undefined };
  const files = new ClientTlsFiles(bundle.pem, identity);
  return {
    // null, not undefined, without a certificate: grpc-js fails every connection for want of an
    // identity ("Failed to load credentials") unless told there is none.
    credentials: experimental.createCertificateProviderChannelCredentials(files, identity ? files : null),
    presented: () => files.presented,
    reread: () => {
      const again: string[] = [];
      const renewed = identityOf(config, again, now());
      const cas = caBundleIn(caFile, again);
      if (again.length > 0 || !cas) throw new ConfigError(again);
      const change: ClientTlsChange = {};
      if (files.trust(cas.pem)) change.cas = cas.certificates;
      if (renewed && files.present(renewed)) change.identity = renewed;
      return change.cas || change.identity ? change : undefined;
    },
  };
}

/** The metric of when the certificate a service presents to gRPC servers expires (see openInternalCaller). */
export const GRPC_CLIENT_TLS_EXPIRY_METRIC = 'grpc_client_tls_certificate_expiry_timestamp_seconds';

/**
 * How this service calls the others: with its internal token, over `grpcClientTransport(config)`,
 * whose files are read again every 30 s (`checkMs`) until `opened` is closed: a changed CA bundle
 * is trusted, and a renewed certificate presented, by new connections, no restart needed; files
 * without a valid one are logged once two checks in a row found them, and leave all as it was.
 * Exports on `registry` when the certificate presented expires: a caller that did not take up a
 * renewal is refused by every server once it does, which the servers' own expiry cannot show.
 */
export function openInternalCaller(
  opened: Opened,
  config: ClientTlsConfig,
  token: string | undefined,
  logger: Logger,
  registry: Registry,
  checkMs = GRPC_TLS_CHECK_MS,
): InternalCaller {
  const transport = grpcClientTransport(config);
  new Gauge({
    name: GRPC_CLIENT_TLS_EXPIRY_METRIC,
    help: 'When the client certificate this service presents to gRPC servers (mutual TLS) expires, in seconds since the epoch (0: none presented)',
    registers: [registry],
    collect() {
      const notAfter = transport.presented()?.notAfter;
      this.set(notAfter ? Math.floor(notAfter.getTime() / 1000) : 0);
    },
  });
  if (!config.GRPC_TLS_CA_FILE) return { token, credentials: transport.credentials };
  const check = tlsFilesCheck(
    () => transport.reread(),
    (change) => {
      if (change.cas)
        logger.info(
          {
            cas: change.cas.map((c) => ({ subject: c.subject, notAfter: new Date(c.validTo).toISOString() })),
          },
          'new gRPC connections trust the changed CA file',
        );
      if (change.identity)
        logger.info(
          { notAfter: change.identity.notAfter.toISOString() },
          'new gRPC connections present the renewed client certificate',
        );
    },
    logger,
    'the gRPC client TLS files hold nothing valid; new connections still use what they held before',
  );
  opened.addStop(
    'grpc tls check',
    runPeriodically(check, checkMs, logger, 'checking the gRPC client TLS files failed'),
  );
  return { token, credentials: transport.credentials };
}
