// The partners' own endpoints (/v1, behind the partner's API key): its traveller-facing settings.
import { routesOf } from "../shared/endpoint.ts";
import { getBrandingRoute, setBrandingRoute } from "./branding.route.ts";
import { getNotificationSettingsRoute, setNotificationSettingsRoute } from "./notification-settings.route.ts";

export const partnerRoutes = routesOf([
  getBrandingRoute,
  setBrandingRoute,
  getNotificationSettingsRoute,
  setNotificationSettingsRoute,
]);
