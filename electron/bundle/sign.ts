import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { ProofloopError } from '../../shared/result';
import type { SignatureFile } from './format';

/** Where the user's key pair lives: `$PROOFLOOP_HOME/keys`, default `~/.proofloop/keys`. */
export function defaultKeyDir(): string {
  const home = process.env.PROOFLOOP_HOME?.trim() || path.join(homedir(), '.proofloop');
  return path.join(home, 'keys');
}

const PRIVATE = 'bundle-signing.key';
const PUBLIC = 'bundle-signing.pub';

/** The public key file a reviewer passes to `verify-bundle --key`. */
export function publicKeyFile(keyDir: string = defaultKeyDir()): string {
  return path.join(keyDir, PUBLIC);
}

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicPem: string;
  fingerprint: string;
}

/** `sha256:<hex>` of the public key's DER (SPKI) bytes. */
export function fingerprintOf(publicKey: KeyObject): string {
  return (
    'sha256:' +
    createHash('sha256')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest('hex')
  );
}

/** The user's Ed25519 key pair, created on first use; the private key file is readable by the owner only. */
export function loadOrCreateKeyPair(keyDir: string = defaultKeyDir()): SigningKey {
  const privFile = path.join(keyDir, PRIVATE);
  const pubFile = path.join(keyDir, PUBLIC);
  if (!existsSync(privFile)) {
    mkdirSync(keyDir, { recursive: true, mode: 0o700 });
    const pair = generateKeyPairSync('ed25519');
    const privPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const pubPem = pair.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    // Written under a temporary name with mode 0600 from the start, then renamed: never world-readable.
    const tmp = `${privFile}.tmp-${process.pid}`;
    writeFileSync(tmp, privPem, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, privFile);
    writeFileSync(pubFile, pubPem, { mode: 0o644 });
  }
  const mode = statSync(privFile).mode & 0o777;
  if (mode & 0o077) {
    // Important: a private key others can read is not the user's alone any more; tighten it.
    chmodSync(privFile, 0o600);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(privFile));
  } catch (e) {
    throw new ProofloopError(
      'invalid_input',
      `cannot read the signing key ${privFile}: ${(e as Error).message}`,
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new ProofloopError('invalid_input', `${privFile} is not an Ed25519 private key`);
  }
  const publicKey = createPublicKey(privateKey);
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
  if (!existsSync(pubFile)) writeFileSync(pubFile, publicPem, { mode: 0o644 });
  return { privateKey, publicKey, publicPem, fingerprint: fingerprintOf(publicKey) };
}

/** The user's public key if a key pair exists, without creating one. */
export function existingPublicKey(keyDir: string = defaultKeyDir()): KeyObject | null {
  const pubFile = path.join(keyDir, PUBLIC);
  if (!existsSync(pubFile)) return null;
  try {
    return parsePublicKey(readFileSync(pubFile, 'utf8'), pubFile);
  } catch {
    return null;
  }
}

export function parsePublicKey(pem: string, what: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (e) {
    throw new ProofloopError(
      'invalid_input',
      `${what} is not a public key in PEM form: ${(e as Error).message}`,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ProofloopError(
      'invalid_input',
      `${what} is a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`,
    );
  }
  return key;
}

export function loadPublicKeyFile(file: string): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ProofloopError('not_found', `cannot read public key ${file}: ${(e as Error).message}`);
  }
  return parsePublicKey(pem, file);
}

/** manifest.sig for the exact bytes of manifest.json. */
export function signManifest(manifestBytes: Buffer, key: SigningKey): SignatureFile {
  return {
    alg: 'ed25519',
    fingerprint: key.fingerprint,
    public_key: key.publicPem,
    signature: sign(null, manifestBytes, key.privateKey).toString('base64'),
  };
}

export function signatureHolds(manifestBytes: Buffer, signatureB64: string, key: KeyObject): boolean {
  try {
    return verify(null, manifestBytes, key, Buffer.from(signatureB64, 'base64'));
  } catch {
    return false;
  }
}
