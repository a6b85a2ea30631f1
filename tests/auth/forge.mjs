// Auth tests: tokens an authorization server would never issue, made with its own keys, for
// the cases a resource server must refuse (a future `nbf`, a foreign `iss`, an unknown `kid`,
// `alg: none`, HS256 keyed with the public key).
//
// usage: node forge.mjs --keys FILE --claims JSON [--kid KID] [--alg ALG]
//                       [--none] [--hs256-with-public-key]
//
// Signs CLAIMS (a JSON object) with the RS256 key of the private JWKS in FILE (the one
// server.mjs signs with), or as --alg says (ES256: its EC key). --kid puts another key id in
// the header (the signature stays the real key's). --none writes an unsigned token with
// `alg: none`; --hs256-with-public-key signs with HMAC-SHA256, the RSA public key (PEM) as the
// secret. Prints the token on stdout.
import { readFileSync } from 'node:fs';
import { createHmac, createPublicKey } from 'node:crypto';
import { SignJWT, importJWK } from 'jose';

const opts = { keys: null, claims: null, kid: null, alg: 'RS256', none: false, hs: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 1) {
  const arg = argv[i];
  if (arg === '--keys') opts.keys = argv[(i += 1)];
  else if (arg === '--claims') opts.claims = JSON.parse(argv[(i += 1)]);
  else if (arg === '--kid') opts.kid = argv[(i += 1)];
  else if (arg === '--alg') opts.alg = argv[(i += 1)];
  else if (arg === '--none') opts.none = true;
  else if (arg === '--hs256-with-public-key') opts.hs = true;
  else {
    console.error(`forge.mjs: unknown argument ${arg}`);
    process.exit(2);
  }
}
if (!opts.keys || !opts.claims) {
  console.error('usage: node forge.mjs --keys FILE --claims JSON [--kid KID] [--alg ALG] [--none] [--hs256-with-public-key]');
  process.exit(2);
}

const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const jwks = JSON.parse(readFileSync(opts.keys, 'utf8'));
const kty = opts.alg.startsWith('ES') ? 'EC' : 'RSA';
const jwk = jwks.keys.find((key) => key.kty === kty);
const kid = opts.kid ?? jwk.kid;

if (opts.none) {
  process.stdout.write(`${b64({ alg: 'none', typ: 'at+jwt', kid })}.${b64(opts.claims)}.`);
} else if (opts.hs) {
  const { d, p, q, dp, dq, qi, ...publicJwk } = jwk;
  const pem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  const input = `${b64({ alg: 'HS256', typ: 'at+jwt', kid })}.${b64(opts.claims)}`;
  const signature = createHmac('sha256', pem).update(input).digest('base64url');
  process.stdout.write(`${input}.${signature}`);
} else {
  const key = await importJWK(jwk, opts.alg);
  const token = await new SignJWT(opts.claims)
    .setProtectedHeader({ alg: opts.alg, typ: 'at+jwt', kid })
    .sign(key);
  process.stdout.write(token);
}
