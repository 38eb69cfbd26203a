// The people's operator endpoints (/admin, behind ADMIN_TOKEN, checked by server/app.ts), in this order.
import { routesOf } from "../shared/endpoint.ts";
import { inviteUserRoute, listUsersRoute } from "./team.route.ts";

export const peopleAdminRoutes = routesOf([inviteUserRoute, listUsersRoute]);
