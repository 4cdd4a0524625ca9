// The token endpoint as the OpenAPI document describes it. The route parses and checks its own
// parameters (every refusal must be an OAuth error, RFC 6749 section 5.2), so this schema only
// documents: the route turns schema validation and response serialisation off.
const str = (description: string) => ({ type: 'string', description });

const OAUTH_ERROR = {
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: str('invalid_request, invalid_client, invalid_grant, unsupported_grant_type or temporarily_unavailable (429).'),
    error_description: str('What was wrong, in words; never a token or code.'),
  },
};

export const TOKEN_ROUTE_SCHEMA = {
  tags: ['oauth'],
  summary: 'Token endpoint: codes, refresh tokens and launch tokens (RFC 8693) for access tokens; client_secret_post or _basic',
  security: [],
  consumes: ['application/x-www-form-urlencoded', 'application/json'],
  body: {
    type: 'object',
    required: ['grant_type'],
    properties: {
      grant_type: {
        type: 'string',
        enum: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange'],
      },
      client_id: str('Or in HTTP Basic.'),
      client_secret: str('Or in HTTP Basic.'),
      code: str('authorization_code: the code of the redirect.'),
      redirect_uri: str("authorization_code: the app's registered redirect URL."),
      code_verifier: str('authorization_code: the PKCE verifier, when the authorization sent a challenge.'),
      refresh_token: str('refresh_token: the refresh token to rotate.'),
      subject_token: str('token exchange: the launch token (`id_token`) the app was opened with; exchanged once.'),
      subject_token_type: { type: 'string', enum: ['urn:ietf:params:oauth:token-type:id_token'] },
      requested_token_type: {
        type: 'string',
        enum: ['urn:storegate:params:oauth:token-type:offline-access-token', 'urn:storegate:params:oauth:token-type:online-access-token'],
        description: "token exchange: the store's own access (the default) or online access bound to the merchant.",
      },
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['token_type', 'access_token', 'expires_at', 'expires_in', 'scope', 'store_id', 'store_name'],
      properties: {
        token_type: { type: 'string', enum: ['Bearer'] },
        access_token: str('For the Access-Token header (or Authorization: Bearer).'),
        refresh_token: str('Offline access only: rotates at each refresh.'),
        expires_at: { type: 'integer', description: 'Unix seconds.' },
        expires_in: { type: 'integer', description: 'Seconds; online access at most 86400.' },
        scope: str('Space-separated.'),
        store_id: { type: 'string' },
        store_name: { type: 'string' },
        issued_token_type: str('Token exchange only: urn:ietf:params:oauth:token-type:access_token.'),
        associated_user_scope: str('Online access only: the scopes the token carries.'),
        associated_user: {
          type: 'object',
          description: 'Online access only: the merchant the token is bound to; it ends at their logout.',
          properties: { id: { type: 'string' }, email: { type: 'string' } },
        },
      },
    },
    400: OAUTH_ERROR,
    401: OAUTH_ERROR,
    429: OAUTH_ERROR,
  },
} as const;
