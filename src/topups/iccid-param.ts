// The ICCID as the top-up endpoints accept it: a length bound only, so that any malformed ICCID,
// however long, reaches the use case and is 400 `invalid_iccid` rather than a schema error.
/**
 * A bound only, as long as the router's longest path parameter: the shape is checked by the use
 * case, so that any malformed ICCID, however long, is 400 `invalid_iccid` rather than a schema error.
 */
export const ICCID_MAX_LENGTH = 200;
export const ICCID_DESCRIPTION =
  "The eSIM's ICCID: 19 or 20 digits starting with 89, the last a Luhn check digit. A malformed one is " +
  "400 `invalid_iccid`; an unknown one, or another partner's, 404 `esim_not_found`.";
