// Auth tests: a real OAuth 2.1 authorization server (the certified `oidc-provider`) on loopback.
//
// usage: node server.mjs --port PORT --keys FILE [--scopes "a b c"] [--ttl SECONDS]
//                        [--sign-in SUBJECT] [--verbose]
//
// Issuer http://127.0.0.1:PORT (PORT 0 picks a free port). Client credentials grant with
// RFC 8707 resource indicators: `resource=<http(s) URL on 127.0.0.1|localhost>` yields a JWT
// access token whose `aud` is exactly that URL (RS256, or ES256 for clients whose id ends in
// `-es`); a resource whose path ends in `/opaque` yields an opaque token for RFC 7662
// introspection by the `introspector` client. `--keys FILE` is a private JWKS used to sign:
// created (one RS256 + one ES256 key) when missing, loaded as-is when present.
// With `--sign-in SUBJECT`, also the authorization code grant for people: dynamic client
// registration (RFC 7591) of public clients with loopback redirects, the confidential
// client `afd-cli` (secret `afd-cli-secret`) registered beforehand, PKCE, refresh tokens,
// and an interaction that signs SUBJECT in and consents to what was asked at once (through
// oidc-provider's interaction API), so that a test's "browser" only follows redirects.
// When listening, prints exactly one line on stdout: {"issuer":"...","port":N}.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';

const DEFAULT_SCOPES = 'shop:read shop:write shop:admin todo:read todo:write';

function parseArgs(argv) {
  const opts = { port: 0, keys: null, scopes: DEFAULT_SCOPES, ttl: 300, verbose: false, signIn: null };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      i += 1;
      return argv[i];
    };
    if (arg === '--port') opts.port = Number(value());
    else if (arg === '--keys') opts.keys = value();
    else if (arg === '--scopes') opts.scopes = value();
    else if (arg === '--ttl') opts.ttl = Number(value());
    else if (arg === '--verbose') opts.verbose = true;
    else if (arg === '--sign-in') opts.signIn = value();
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) throw new Error('--port must be 0..65535');
  if (!opts.keys) throw new Error('--keys FILE is required');
  if (!Number.isInteger(opts.ttl) || opts.ttl < 1) throw new Error('--ttl must be a positive integer');
  return opts;
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (error) {
  console.error(`server.mjs: ${error.message}`);
  console.error('usage: node server.mjs --port PORT --keys FILE [--scopes "a b c"] [--ttl SECONDS] [--sign-in SUBJECT] [--verbose]');
  process.exit(2);
}

// stdout carries only the ready line. oidc-provider prints notices with console.info (stdout)
// and warnings with console.warn (e.g. "Unsupported runtime" on Node 20): send both to stderr
// with --verbose, drop them otherwise. This must happen before oidc-provider is imported.
const toStderr = (...args) => { if (opts.verbose) process.stderr.write(`${args.join(' ')}\n`); };
console.info = toStderr;
console.log = toStderr;
console.warn = toStderr;

let Provider;
let errors;
let generateKeyPair;
let exportJWK;

async function loadOrCreateKeys(file) {
  if (existsSync(file)) {
    const jwks = JSON.parse(readFileSync(file, 'utf8'));
    if (!Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new Error(`${file}: not a JWKS with keys`);
    return jwks;
  }
  const suffix = randomBytes(6).toString('hex');
  const keys = [];
  for (const [alg, options, prefix] of [
    ['RS256', { modulusLength: 2048, extractable: true }, 'rsa'],
    ['ES256', { crv: 'P-256', extractable: true }, 'ec'],
  ]) {
    const { privateKey } = await generateKeyPair(alg, options);
    keys.push({ ...(await exportJWK(privateKey)), kid: `${prefix}-${suffix}`, alg, use: 'sig' });
  }
  const jwks = { keys };
  writeFileSync(file, `${JSON.stringify(jwks, null, 2)}\n`, { mode: 0o600 });
  return jwks;
}

const resourceScopes = opts.scopes.split(' ').filter(Boolean);
const allScopes = [...new Set([...DEFAULT_SCOPES.split(' '), ...resourceScopes])];
// The scopes each client may be granted (`reader-es` etc. as their RS256 twins).
const CLIENT_SCOPES = {
  reader: 'shop:read todo:read',
  writer: 'shop:read shop:write todo:read todo:write',
  admin: allScopes.join(' '),
};
const client = (id, extra = {}) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  // oidc-provider 9 accepts client_secret_post for a client registered with
  // client_secret_basic (and vice versa): both are the same secret-based method.
  token_endpoint_auth_method: 'client_secret_basic',
  ...extra,
});
const clients = ['reader', 'writer', 'admin', 'reader-es', 'writer-es', 'admin-es']
  .map((id) => client(id, { scope: CLIENT_SCOPES[id.replace(/-es$/, '')] }));
clients.push(client('introspector', { grant_types: [] }));
// With --sign-in: a confidential client registered beforehand for the authorization code
// grant (a native app: any loopback port).
if (opts.signIn) {
  clients.push(client('afd-cli', {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: ['http://127.0.0.1/callback'],
    application_type: 'native',
  }));
}

// features.resourceIndicators.getResourceServerInfo: which resource indicators are accepted, and how.
async function getResourceServerInfo(_ctx, resourceIndicator, theClient) {
  let url;
  try {
    url = new URL(resourceIndicator);
  } catch {
    throw new errors.InvalidTarget('resource indicator must be an absolute URL');
  }
  if (!['http:', 'https:'].includes(url.protocol) || !['127.0.0.1', 'localhost'].includes(url.hostname)) {
    throw new errors.InvalidTarget('resource indicator must be an http(s) URL on 127.0.0.1 or localhost');
  }
  const base = { scope: resourceScopes.join(' '), audience: resourceIndicator, accessTokenTTL: opts.ttl };
  if (url.pathname.endsWith('/opaque')) return { ...base, accessTokenFormat: 'opaque' };
  const alg = theClient?.clientId?.endsWith('-es') ? 'ES256' : 'RS256';
  return { ...base, accessTokenFormat: 'jwt', jwt: { sign: { alg } } };
}

async function main() {
  ({ default: Provider, errors } = await import('oidc-provider'));
  ({ generateKeyPair, exportJWK } = await import('jose'));
  const jwks = await loadOrCreateKeys(opts.keys);

  // Listen first (port 0 resolves to a real port), then build the provider: the issuer has the port.
  let handler = (_req, res) => { res.statusCode = 503; res.end(); };
  const server = createServer((req, res) => handler(req, res));
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients,
    jwks,
    // Every scope a client may be registered with must be known to the provider; this is also
    // what makes a request for a scope outside a client's `scope` metadata fail (invalid_scope).
    scopes: ['openid', ...allScopes.filter((scope) => scope !== 'openid')],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // The resource server (`introspector`) may introspect every token; others only their own.
        allowedPolicy: async (_ctx, caller, token) => caller.clientId === 'introspector' || caller.clientId === token.clientId,
      },
      revocation: { enabled: true },
      // People sign in only with --sign-in: public clients register themselves.
      registration: { enabled: Boolean(opts.signIn) },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => false,
        getResourceServerInfo,
      },
    },
    // JWT access tokens always carry sub (= client_id for client credentials); this makes
    // introspection answers for opaque client-credentials tokens carry it too.
    extraTokenClaims: async (_ctx, token) => (token.kind === 'ClientCredentials' ? { sub: token.clientId } : undefined),
    ttl: {
      ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL || opts.ttl,
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL || opts.ttl,
    },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // A refresh token for every authorization code grant (not only with offline_access).
    issueRefreshToken: async (_ctx, theClient, code) => theClient.grantTypeAllowed('refresh_token') && code.kind === 'AuthorizationCode',
  });

  // The "person": signs in as --sign-in's subject and grants every scope asked for.
  async function interact(req, res) {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params, session, grantId } = details;
    let result;
    if (prompt.name === 'login') {
      result = { login: { accountId: opts.signIn } };
    } else {
      const grant = grantId
        ? await provider.Grant.find(grantId)
        : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
      if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
      for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes || {})) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
      result = { consent: { grantId: await grant.save() } };
    }
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  }

  provider.on('server_error', (_ctx, error) => console.error(`server_error: ${error?.stack || error}`));
  if (opts.verbose) {
    for (const event of ['grant.error', 'introspection.error', 'jwks.error', 'discovery.error']) {
      provider.on(event, (_ctx, error) => process.stderr.write(`${event}: ${error?.message} ${error?.error_description || ''}\n`));
    }
  }

  const callback = provider.callback();
  handler = (req, res) => {
    if (opts.signIn && req.url.startsWith('/interaction/')) {
      interact(req, res).catch((error) => {
        console.error(`interaction: ${error?.stack || error}`);
        res.statusCode = 500;
        res.end();
      });
      return;
    }
    callback(req, res);
  };
  process.stdout.write(`${JSON.stringify({ issuer, port })}\n`);

  function shutdown() {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
    setTimeout(() => process.exit(0), 2000).unref();
  }
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error) => {
  console.error(`server.mjs: ${error?.message || error}`);
  process.exit(1);
});
