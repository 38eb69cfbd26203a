// ICCIDs as suppliers write them (src/lib/luhn.ts): the ICCIDs in Airalo's and eSIM Go's order
// examples fail the Luhn rule, so the adapters take 18-22 digits, and a partner may name such an eSIM of ours
// ("Luhn-valid or known to us": an unknown one without a check digit stays 400 invalid_iccid).
import assert from "node:assert/strict";
import { test } from "node:test";
import { requireValidIccid, unknownEsim } from "../src/esims/iccid-param.ts";
import { hasValidLuhnDigit, isIccidShaped, isSupplierIccid, isValidIccid } from "../src/lib/luhn.ts";
import { classifySearch } from "../src/orders/search-query.ts";
import { ApiError } from "../src/shared/errors.ts";

/** From docs/suppliers/airalo.md (§6's order list) and esimgo.md (§3's order and install details). */
const DOCS_ICCIDS = ["891000000000009125", "8900000000000000001", "8944123456789012345"];

test("the suppliers' example ICCIDs fail the Luhn rule, and are suppliers' ICCIDs", () => {
  for (const iccid of DOCS_ICCIDS) {
    assert.equal(hasValidLuhnDigit(iccid) && isValidIccid(iccid), false, iccid);
    assert.equal(isSupplierIccid(iccid), true, iccid);
    assert.equal(isIccidShaped(iccid), true, iccid);
  }
  for (const bad of ["8910000000000091", "89100000000000912512345", "89100000000000912a", ""]) {
    assert.equal(isSupplierIccid(bad), false, bad);
    assert.equal(isIccidShaped(bad), false, bad);
  }
});

test("a partner's ICCID parameter takes a supplier's ICCID; unknown and without a check digit it is 400, with one 404", () => {
  assert.equal(requireValidIccid("891000000000009125"), "891000000000009125");
  assert.throws(
    () => requireValidIccid("8910000000000091"),
    (error: ApiError) => error.code === "invalid_iccid",
  );
  assert.equal(unknownEsim("891000000000009125").code, "invalid_iccid");
  assert.equal(
    unknownEsim("8944500102198304826").code,
    isValidIccid("8944500102198304826") ? "esim_not_found" : "invalid_iccid",
  );
  assert.ok(unknownEsim("8944500102198304826") instanceof ApiError);
});

test("the order search takes a supplier's ICCID as an ICCID", () => {
  assert.deepEqual(classifySearch(" 891000000000009125 "), { kind: "iccid", iccid: "891000000000009125" });
  assert.equal(classifySearch("1234567").kind, "prefix");
});
