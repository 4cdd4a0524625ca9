// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` and
// `RateLimit`, Structured Field lists of a named policy with parameters) for the Admin API's
// leaky bucket, beside the family's own `X-Service-Api-Call-Limit: used/bucket`.
//
// A leaky bucket has no fixed window, so the policy states its outer bound: `q` requests (the
// bucket's depth) within `w` seconds (the time a full bucket takes to drain). `r` is what the
// bucket still takes now, `t` the seconds until it has drained completely, which is when the whole
// quota is back.

export const RATE_LIMIT_POLICY_NAME = 'admin-api';

export function rateLimitPolicyField(bucket: number, perSecond: number): string {
  return `"${RATE_LIMIT_POLICY_NAME}";q=${bucket};w=${Math.max(1, Math.ceil(bucket / perSecond))}`;
}

export function rateLimitField(
  decision: { allowed: boolean; used: number; state: { level: number } },
  bucket: number,
  perSecond: number,
): string {
  const remaining = decision.allowed ? Math.max(0, bucket - decision.used) : 0;
  const reset = Math.max(0, Math.ceil(decision.state.level / perSecond));
  return `"${RATE_LIMIT_POLICY_NAME}";r=${remaining};t=${reset}`;
}
