// Support work's partner endpoints (issue 32), mounted under /v1 in this order (the order of the
// OpenAPI document): resend the confirmation email, the email log, the timeline.
import { routesOf } from "../shared/endpoint.ts";
import { listOrderEmailsRoute } from "./list-order-emails.route.ts";
import { listOrderEventsRoute } from "./list-order-events.route.ts";
import { resendEmailRoute } from "./resend-confirmation-email.route.ts";

export const supportRoutes = routesOf([resendEmailRoute, listOrderEmailsRoute, listOrderEventsRoute]);
