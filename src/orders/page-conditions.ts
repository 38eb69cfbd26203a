// What another domain's page statement takes from the orders domain (the eSIMs' page joins the order
// that bought each eSIM): the conditions on the joined orders' columns, which stay this domain's along
// with their indexes (migration 0028), and the capped newest-first read every unnarrowed page shares.
export { joinedOrderConditions, onePartner, splitScan } from "./orders.sql.ts";
