// The OpenAPI description of token introspection: its parameters and its answer. The answer's
// schema also serializes it, so every member an answer may carry is named here.

const ACTIVE_MEMBERS = {
  active: { type: 'boolean', description: 'Whether the token is live now; when false, no other member is sent.' },
  scope: { type: 'string', description: 'The scopes it grants now, space-separated.' },
  client_id: { type: 'string', description: "The public app's client_id; absent for a private app's token." },
  sub: {
    type: 'string',
    description: "Online access only: the id of the merchant the token acts for (it ends at the merchant's logout).",
  },
  private_app_id: { type: 'string', description: "The private app's id in the store, for a private app's token only." },
  token_type: {
    type: 'string',
    enum: ['Bearer', 'refresh_token'],
    description: '`Bearer` for an access token or a private-app token (what the Admin API takes); `refresh_token` for a refresh token.',
  },
  exp: { type: 'integer', description: "Expiry, unix seconds; absent for a private app's token (it lives until revoked)." },
  iat: { type: 'integer', description: 'Issue time, unix seconds; absent for a refresh token.' },
  iss: { type: 'string', description: "The store's base URL: the token's issuer." },
  store: { type: 'string', description: "The store's name." },
};

const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, error_description: { type: 'string' } },
};

export const INTROSPECTION_SCHEMA = {
  tags: ['oauth'],
  summary: "Token introspection (RFC 7662) for the operator's resource servers",
  description:
    'Authenticate with the client_id and secret of a resource server (`storegate resource-servers create`), by HTTP Basic or in the ' +
    'body; ' +
    "any other credential, an app's included, is 401 `invalid_client`. An expired, revoked, uninstalled, narrowed, unknown or malformed " +
    'token, or another store\'s, is `{"active": false}`. Introspecting a token does not count as its use. ' +
    'Each resource server has its own rate limit (`--introspect-rate-limit`, 300/5 by default): over it, 429 with Retry-After.',
  security: [{ ResourceServer: [] }],
  consumes: ['application/x-www-form-urlencoded', 'application/json'],
  body: {
    type: 'object',
    required: ['token'],
    properties: {
      token: { type: 'string', description: 'The token asked about.' },
      token_type_hint: {
        type: 'string',
        enum: ['access_token', 'refresh_token'],
        description: 'Optional; every kind is looked up anyway.',
      },
      client_id: { type: 'string', description: 'With client_secret, instead of HTTP Basic.' },
      client_secret: { type: 'string' },
    },
  },
  response: {
    200: { type: 'object', required: ['active'], properties: ACTIVE_MEMBERS },
    400: { ...OAUTH_ERROR, description: 'invalid_request: no token, a malformed body or an unknown token_type_hint' },
    401: { ...OAUTH_ERROR, description: 'invalid_client: not a resource server, or a wrong secret (with WWW-Authenticate: Basic)' },
    429: { ...OAUTH_ERROR, description: 'temporarily_unavailable: over the rate limit of this resource server (with Retry-After)' },
  },
};
