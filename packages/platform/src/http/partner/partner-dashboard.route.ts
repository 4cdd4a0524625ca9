// The partner dashboard on the bare platform domain: login, apps, webhook deliveries, and the
// partner API the apps call with their own client credentials.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.ts';
import { type PartnerAppServices, registerPartnerAppRoutes } from './partner-apps.route.ts';
import { type PartnerAppSecretServices, registerPartnerAppSecretRoutes } from './partner-app-secrets.route.ts';
import { registerPartnerLoginRoutes } from './partner-login.route.ts';
import { registerPartnerWebhookRoutes } from './partner-webhooks.route.ts';
import { registerPartnerApiHealthRoute } from './partner-api-health.route.ts';
import { registerPartnerEndpointsRoute } from './partner-endpoints.route.ts';
import { type PartnerApiServices, registerPartnerApiRoutes } from './partner-api.route.ts';
import { registerPartnerAppWebhookRoutes } from './partner-app-webhooks.route.ts';
import { registerPartnerSignatureRoutes } from './partner-app-signatures.route.ts';
import { registerPartnerWebhookRecoveryRoutes } from './partner-webhook-recovery.route.ts';

/** What the partner dashboard's pages and the partner API use, all of them together. */
export type PartnerDashboardServices = Pick<
  Services,
  | keyof PartnerAppServices
  | keyof PartnerAppSecretServices
  | keyof PartnerApiServices
  | 'accounts'
  | 'apiHealth'
  | 'clock'
  | 'deliveries'
  | 'endpointHealth'
  | 'loginThrottle'
  | 'metrics'
  | 'webhookRecovery'
  | 'webhookSignatures'
>;

export function registerPartnerDashboard(app: FastifyInstance, services: PartnerDashboardServices): void {
  registerPartnerLoginRoutes(app, services);
  registerPartnerAppRoutes(app, services);
  registerPartnerAppSecretRoutes(app, services);
  registerPartnerSignatureRoutes(app, services);
  registerPartnerWebhookRoutes(app, services);
  registerPartnerApiHealthRoute(app, services);
  registerPartnerEndpointsRoute(app, services);
  registerPartnerAppWebhookRoutes(app, services);
  registerPartnerApiRoutes(app, services);
  registerPartnerWebhookRecoveryRoutes(app, services);
}
