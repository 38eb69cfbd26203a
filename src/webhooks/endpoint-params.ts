// Path parameters of the webhook routes: a length bound only, so that any id that is not the
// partner's (unknown, malformed or another partner's) is the same 404.
import { Type } from "typebox";
import { NO_CONTROL_CHARACTERS } from "../shared/schemas.ts";

const Id = Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS });

export const EndpointParams = Type.Object({ endpoint_id: Id });
export const DeliveryParams = Type.Object({ endpoint_id: Id, delivery_id: Id });
