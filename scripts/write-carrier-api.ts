// `npm run carrier-api:write`: docs/carrier-api.openapi.json from src/simulators/carrier/carrier-api-document.ts.
import { writeFileSync } from "node:fs";
import { carrierApiDocument } from "../src/simulators/carrier/carrier-api-document.ts";

writeFileSync("docs/carrier-api.openapi.json", `${JSON.stringify(carrierApiDocument(), null, 2)}\n`);
console.log("wrote docs/carrier-api.openapi.json");
