// GET/POST {base_url}/admin/oauth/authorize: where an app sends the merchant to grant it scopes
// (consent page, then a signed redirect back with an authorization code). A chain of one-step
// checks. Checks that fail before the redirect_uri is trusted render an error page and never
// redirect, so the endpoint cannot be used to send a merchant to an arbitrary address. Every
// error redirect back to the app names the issuer (`iss`, RFC 9207: the store's base URL, as its
// discovery document states), so an app that talks to several stores or platforms can tell which
// one answered; the redirect with the code names it when the app has turned that on (see below).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storeBaseUrl, type Config } from '../../config.ts';
import type { Services } from '../../services/services.ts';
import { signedQueryString } from '../../domain/query-signature.ts';
import { parseScopes, storedScopes, type Scope } from '../../domain/scopes.ts';
import {
  AccessDenied,
  AuthorizePageError,
  InvalidRequest,
  InvalidScope,
  OAuthError,
  ScopeParseError,
  UnsupportedResponseType,
} from '../../domain/errors.ts';
import { storeHostname } from '../../domain/store-host.ts';
import type { AppProfile } from '../../domain/app-profile.ts';
import { currentMerchant, redirectToLogin } from '../store-admin/merchant-session.ts';
import { consentChange, consentPage } from '../views/consent-page.ts';

interface AuthorizeRequest {
  app: AppProfile;
  redirectUri: string;
  state: string;
  scopes: Scope[];
  codeChallenge: string | null;
  /** The code yields online access, bound to the merchant who consents. */
  online: boolean;
  params: Record<string, string | undefined>;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

async function checkClient(apps: Services['apps'], p: Record<string, unknown>): Promise<AppProfile> {
  const clientId = str(p.client_id);
  if (!clientId) throw new AuthorizePageError('The link is missing client_id.');
  const app = await apps.findByClientId(clientId);
  if (!app) throw new AuthorizePageError('No app is registered with this client_id.');
  return app;
}

function checkRedirectUri(app: AppProfile, p: Record<string, unknown>): string {
  const redirectUri = str(p.redirect_uri);
  if (!redirectUri) throw new AuthorizePageError('The link is missing redirect_uri.');
  if (redirectUri.includes('#')) throw new AuthorizePageError('redirect_uri must not contain "#".');
  if (redirectUri !== app.redirect_uri) throw new AuthorizePageError("redirect_uri does not match the app's registered redirect URL.");
  return redirectUri;
}

function checkResponseType(p: Record<string, unknown>): void {
  if (str(p.response_type) !== 'code') throw new UnsupportedResponseType();
}

// The state comes back in the signed redirect exactly as sent, so it is held to the characters
// that read the same raw and percent-encoded (RFC 3986 unreserved): a `&` or `=` in a signed value
// could make the signed string read as other parameters, and `%` or anything else would sign
// differently for clients of the family that sign the encoded query.
const STATE = /^[A-Za-z0-9._~-]{1,1024}$/;

function checkState(p: Record<string, unknown>): string {
  const state = str(p.state);
  if (!state) throw new InvalidRequest('state is required');
  if (!STATE.test(state)) throw new InvalidRequest('state must be 1 to 1024 URL-safe characters: letters, digits and "-", ".", "_", "~"');
  return state;
}

function checkScope(p: Record<string, unknown>): Scope[] {
  const scope = str(p.scope);
  if (!scope || scope.trim() === '') throw new InvalidScope('scope is required');
  try {
    return parseScopes(scope);
  } catch (err) {
    if (err instanceof ScopeParseError) throw new InvalidScope(err.message);
    throw err;
  }
}

function checkPkce(p: Record<string, unknown>): string | null {
  const challenge = str(p.code_challenge);
  if (challenge === undefined) return null;
  if ((str(p.code_challenge_method) ?? 'plain') !== 'S256') throw new InvalidRequest('code_challenge_method must be S256');
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) throw new InvalidRequest('code_challenge must be a base64url SHA-256 digest');
  return challenge;
}

// `grant_options[]=per-user` asks for online access: a token bound to the merchant who consents,
// with no refresh token, ending at their logout. Empty (or absent) is the store's own access.
const GRANT_OPTIONS = 'grant_options[]';

function checkGrantOptions(p: Record<string, unknown>): boolean {
  const raw = p[GRANT_OPTIONS];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (values.some((v) => typeof v !== 'string' || (v !== '' && v !== 'per-user')))
    throw new InvalidRequest('grant_options[] may only be per-user');
  return values.includes('per-user');
}

/** Runs the checks in order. Errors after the redirect_uri is known go back to the app. */
async function parseAuthorize(
  services: Pick<Services, 'apps' | 'config'>,
  p: Record<string, unknown>,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<AuthorizeRequest | undefined> {
  const app = await checkClient(services.apps, p);
  const redirectUri = checkRedirectUri(app, p);
  try {
    checkResponseType(p);
    const state = checkState(p);
    const scopes = checkScope(p);
    const codeChallenge = checkPkce(p);
    const online = checkGrantOptions(p);
    const params = {
      client_id: app.client_id,
      scope: scopes.join(' '),
      redirect_uri: redirectUri,
      response_type: 'code',
      state,
      code_challenge: codeChallenge ?? undefined,
      code_challenge_method: codeChallenge ? 'S256' : undefined,
      [GRANT_OPTIONS]: online ? 'per-user' : undefined,
    };
    return { app, redirectUri, state, scopes, codeChallenge, online, params };
  } catch (err) {
    if (err instanceof OAuthError) {
      redirectError(services.config, req, reply, redirectUri, err, str(p.state));
      return undefined;
    }
    throw err;
  }
}

/** The issuer of this store's authorization responses: its base URL. */
function issuer(config: Config, req: FastifyRequest): string {
  return storeBaseUrl(config, req.store!.name);
}

function redirectError(
  config: Config,
  req: FastifyRequest,
  reply: FastifyReply,
  redirectUri: string,
  err: OAuthError,
  state: string | undefined,
): void {
  const url = new URL(redirectUri);
  url.searchParams.set('error', err.error);
  url.searchParams.set('error_description', err.description);
  if (state) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer(config, req));
  void reply.redirect(url.toString(), 303);
}

async function redirectWithCode(
  services: Pick<Services, 'clock' | 'config' | 'oauth' | 'rotations'>,
  req: FastifyRequest,
  reply: FastifyReply,
  ar: AuthorizeRequest,
  installationId: number,
  merchantId: number,
): Promise<FastifyReply> {
  const store = req.store!;
  const code = await services.oauth.issueCode({
    appId: ar.app.id,
    storeId: store.id,
    installationId,
    redirectUri: ar.redirectUri,
    scopes: ar.scopes,
    codeChallenge: ar.codeChallenge,
    ...(ar.online ? { merchantId } : {}),
  });
  // This redirect is signed, and `iss` would be signed like every other parameter, over its raw
  // value. It is the one value that cannot be URL-safe (a URL, with ":" and "/"), so a client that
  // signs the percent-encoded query (as many existing clients of this platform family do) could no
  // longer match the hmac. It is sent only to apps that turned it on; error redirects are unsigned
  // and always carry it.
  const params: Record<string, string> = {
    code,
    ...(ar.app.authorization_iss === 1 ? { iss: issuer(services.config, req) } : {}),
    shop: storeHostname(store.name, services.config.storeDomain),
    state: ar.state,
    timestamp: String(Math.floor(services.clock() / 1000)),
  };
  const url = new URL(ar.redirectUri);
  for (const [k, v] of new URLSearchParams(signedQueryString(params, services.rotations.querySigningSecret(ar.app))))
    url.searchParams.set(k, v);
  return reply.header('Cache-Control', 'no-store').redirect(url.toString(), 303);
}

/** What the authorize route uses: the app and its grant, the merchant's session, the signed redirect. */
export type AuthorizeRouteServices = Pick<Services, 'accounts' | 'apps' | 'clock' | 'config' | 'oauth' | 'rotations'>;

export function registerAuthorizeRoutes(app: FastifyInstance, services: AuthorizeRouteServices): void {
  app.get('/admin/oauth/authorize', async (req, reply) => {
    const ar = await parseAuthorize(services, req.query as Record<string, unknown>, req, reply);
    if (!ar) return reply;
    const merchant = await currentMerchant(services.accounts, req);
    if (!merchant) return redirectToLogin(req, reply);
    const installation = await services.apps.findInstallation(req.store!.id, ar.app.id);
    const granted = installation && installation.uninstalled_at === null ? storedScopes(installation.scopes) : undefined;
    const { added, removed } = consentChange(ar.scopes, granted);
    // The request is the grant as it stands: no consent page, straight back with a new code.
    if (granted && added.length === 0 && removed.length === 0)
      return redirectWithCode(services, req, reply, ar, installation!.id, merchant.merchantId);
    const consent = consentPage({
      appName: ar.app.name,
      storeName: req.store!.name,
      scopes: ar.scopes,
      granted,
      online: ar.online,
      action: '/admin/oauth/authorize',
      fields: { ...ar.params, _csrf: reply.generateCsrf() },
    });
    return reply.header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(consent);
  });

  app.post('/admin/oauth/authorize', { preHandler: app.csrfProtection }, async (req, reply) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const ar = await parseAuthorize(services, body, req, reply);
    if (!ar) return reply;
    const merchant = await currentMerchant(services.accounts, req);
    if (!merchant) return redirectToLogin(req, reply);
    const decision = str(body.decision);
    if (decision === 'cancel') {
      redirectError(services.config, req, reply, ar.redirectUri, new AccessDenied(), ar.state);
      return reply;
    }
    if (decision !== 'install') throw new InvalidRequest('decision must be install or cancel');
    const installation = await services.apps.grant(req.store!.id, ar.app.id, ar.scopes);
    req.log.info({ store: req.store!.name, client_id: ar.app.client_id }, 'app authorized');
    return redirectWithCode(services, req, reply, ar, installation.id, merchant.merchantId);
  });
}
