// The eSIM-capable devices the service ships with (contract, "Catalog additions"), seeding the
// compatible_devices table (migration 0040) until the operator imports its own list.
//
// Source: the manufacturers' and the large eSIM sellers' public compatibility lists (Apple's
// "Using eSIM" pages, Google's Pixel help, Samsung's and Motorola's support pages, Airalo's and
// Holafly's device lists), written from what those lists said as of SHIPPED_DEVICES_UPDATED_AT:
// a compilation from knowledge of them, not an export, and not exhaustive. Regional variants
// differ, and a shop should say so: iPhones sold in mainland China (and most in Hong Kong and
// Macao) have no eSIM; Pixel 3 from Australia, Taiwan and Japan, Pixel 3a from Japan and some
// Galaxy A models from some regions have none; Apple Watch and the LTE watches take an eSIM of the
// paired phone's own carrier. The operator replaces the list with `npm run cli -- devices import`.
import type { DeviceRow } from "./compatible-devices.sql.ts";

/** When the shipped list was last checked against the public lists; its `updated_at` until an import. */
export const SHIPPED_DEVICES_UPDATED_AT = "2026-11-01T00:00:00.000Z";

type Family = { brand: string; os: string; models: readonly string[] };

// biome-ignore format: one family per entry, models in release order
const FAMILIES: readonly Family[] = [
  { brand: "Apple", os: "iOS", models: ["iPhone XS", "iPhone XS Max", "iPhone XR", "iPhone 11", "iPhone 11 Pro", "iPhone 11 Pro Max", "iPhone SE (2nd generation)", "iPhone SE (3rd generation)", "iPhone 12 mini", "iPhone 12", "iPhone 12 Pro", "iPhone 12 Pro Max", "iPhone 13 mini", "iPhone 13", "iPhone 13 Pro", "iPhone 13 Pro Max", "iPhone 14", "iPhone 14 Plus", "iPhone 14 Pro", "iPhone 14 Pro Max", "iPhone 15", "iPhone 15 Plus", "iPhone 15 Pro", "iPhone 15 Pro Max", "iPhone 16", "iPhone 16 Plus", "iPhone 16 Pro", "iPhone 16 Pro Max", "iPhone 16e", "iPhone 17", "iPhone 17 Pro", "iPhone 17 Pro Max", "iPhone Air"] },
  { brand: "Apple", os: "iPadOS", models: ["iPad (7th generation)", "iPad (8th generation)", "iPad (9th generation)", "iPad (10th generation)", "iPad (A16)", "iPad mini (5th generation)", "iPad mini (6th generation)", "iPad mini (A17 Pro)", "iPad Air (3rd generation)", "iPad Air (4th generation)", "iPad Air (5th generation)", "iPad Air 11-inch (M2)", "iPad Air 13-inch (M2)", "iPad Air 11-inch (M3)", "iPad Air 13-inch (M3)", "iPad Pro 11-inch (1st generation)", "iPad Pro 11-inch (2nd generation)", "iPad Pro 11-inch (3rd generation)", "iPad Pro 11-inch (4th generation)", "iPad Pro 11-inch (M4)", "iPad Pro 11-inch (M5)", "iPad Pro 12.9-inch (3rd generation)", "iPad Pro 12.9-inch (4th generation)", "iPad Pro 12.9-inch (5th generation)", "iPad Pro 12.9-inch (6th generation)", "iPad Pro 13-inch (M4)", "iPad Pro 13-inch (M5)"] },
  { brand: "Apple", os: "watchOS", models: ["Apple Watch Series 3 (GPS + Cellular)", "Apple Watch Series 4 (GPS + Cellular)", "Apple Watch Series 5 (GPS + Cellular)", "Apple Watch Series 6 (GPS + Cellular)", "Apple Watch Series 7 (GPS + Cellular)", "Apple Watch Series 8 (GPS + Cellular)", "Apple Watch Series 9 (GPS + Cellular)", "Apple Watch Series 10 (GPS + Cellular)", "Apple Watch Series 11 (GPS + Cellular)", "Apple Watch SE (GPS + Cellular)", "Apple Watch SE (2nd generation) (GPS + Cellular)", "Apple Watch SE 3 (GPS + Cellular)", "Apple Watch Ultra", "Apple Watch Ultra 2", "Apple Watch Ultra 3"] },
  { brand: "Google", os: "Android", models: ["Pixel 3", "Pixel 3 XL", "Pixel 3a", "Pixel 3a XL", "Pixel 4", "Pixel 4 XL", "Pixel 4a", "Pixel 4a (5G)", "Pixel 5", "Pixel 5a", "Pixel 6", "Pixel 6 Pro", "Pixel 6a", "Pixel 7", "Pixel 7 Pro", "Pixel 7a", "Pixel Fold", "Pixel 8", "Pixel 8 Pro", "Pixel 8a", "Pixel 9", "Pixel 9 Pro", "Pixel 9 Pro XL", "Pixel 9 Pro Fold", "Pixel 9a", "Pixel 10", "Pixel 10 Pro", "Pixel 10 Pro XL", "Pixel 10 Pro Fold"] },
  { brand: "Google", os: "Wear OS", models: ["Pixel Watch (LTE)", "Pixel Watch 2 (LTE)", "Pixel Watch 3 (LTE)", "Pixel Watch 4 (LTE)"] },
  { brand: "Samsung", os: "Android", models: ["Galaxy S20", "Galaxy S20+", "Galaxy S20 Ultra", "Galaxy S20 FE", "Galaxy S21", "Galaxy S21+", "Galaxy S21 Ultra", "Galaxy S21 FE", "Galaxy S22", "Galaxy S22+", "Galaxy S22 Ultra", "Galaxy S23", "Galaxy S23+", "Galaxy S23 Ultra", "Galaxy S23 FE", "Galaxy S24", "Galaxy S24+", "Galaxy S24 Ultra", "Galaxy S24 FE", "Galaxy S25", "Galaxy S25+", "Galaxy S25 Ultra", "Galaxy S25 Edge", "Galaxy S25 FE", "Galaxy Note20", "Galaxy Note20 Ultra", "Galaxy Z Fold", "Galaxy Z Fold2", "Galaxy Z Fold3", "Galaxy Z Fold4", "Galaxy Z Fold5", "Galaxy Z Fold6", "Galaxy Z Fold7", "Galaxy Z Flip", "Galaxy Z Flip 5G", "Galaxy Z Flip3", "Galaxy Z Flip4", "Galaxy Z Flip5", "Galaxy Z Flip6", "Galaxy Z Flip7", "Galaxy Z Flip7 FE", "Galaxy A35 5G", "Galaxy A36 5G", "Galaxy A54 5G", "Galaxy A55 5G", "Galaxy A56 5G"] },
  { brand: "Samsung", os: "Wear OS", models: ["Galaxy Watch4 (LTE)", "Galaxy Watch4 Classic (LTE)", "Galaxy Watch5 (LTE)", "Galaxy Watch5 Pro (LTE)", "Galaxy Watch6 (LTE)", "Galaxy Watch6 Classic (LTE)", "Galaxy Watch7 (LTE)", "Galaxy Watch Ultra (LTE)", "Galaxy Watch8 (LTE)", "Galaxy Watch8 Classic (LTE)"] },
  { brand: "Motorola", os: "Android", models: ["razr (2019)", "razr 5G", "razr 40", "razr 40 ultra", "razr 50", "razr 50 ultra", "razr 60", "razr 60 ultra", "razr+ (2023)", "razr+ (2024)", "edge (2022)", "edge (2023)", "edge+ (2023)", "edge 40", "edge 40 pro", "edge 40 neo", "edge 50 pro", "edge 50 ultra", "edge 50 fusion", "edge 60", "edge 60 pro", "moto g54 5G", "moto g84 5G", "moto g85 5G", "moto g stylus 5G (2024)", "moto g power 5G (2024)"] },
  { brand: "Huawei", os: "Android", models: ["P40", "P40 Pro", "Mate 40 Pro"] },
  { brand: "Xiaomi", os: "Android", models: ["Xiaomi 12T Pro", "Xiaomi 13", "Xiaomi 13 Pro", "Xiaomi 13 Lite", "Xiaomi 13T", "Xiaomi 13T Pro", "Xiaomi 14", "Xiaomi 14 Ultra", "Xiaomi 14T", "Xiaomi 14T Pro", "Xiaomi 15", "Xiaomi 15 Ultra", "Xiaomi 15T", "Xiaomi 15T Pro", "Redmi Note 13 Pro+ 5G", "Redmi Note 14 Pro+ 5G"] },
  { brand: "OnePlus", os: "Android", models: ["OnePlus 12", "OnePlus 12R", "OnePlus 13", "OnePlus 13R", "OnePlus Open"] },
  { brand: "OPPO", os: "Android", models: ["Find X3 Pro", "Find X5", "Find X5 Pro", "Find N2 Flip", "Find N3", "Find N3 Flip", "Find X8", "Find X8 Pro", "Reno5 A", "Reno7 A", "Reno9 A"] },
  { brand: "Sony", os: "Android", models: ["Xperia 1 III", "Xperia 5 III", "Xperia 10 III Lite", "Xperia 1 IV", "Xperia 5 IV", "Xperia 10 IV", "Xperia 1 V", "Xperia 5 V", "Xperia 10 V", "Xperia 1 VI", "Xperia 10 VI", "Xperia 1 VII"] },
  { brand: "Honor", os: "Android", models: ["Magic4 Pro", "Magic5 Pro", "Magic6 Pro", "Magic7 Pro", "Magic V2", "Magic V3"] },
  { brand: "vivo", os: "Android", models: ["X90 Pro", "X100 Pro", "X200 Pro", "X Fold3 Pro"] },
  { brand: "Nokia", os: "Android", models: ["XR21", "X30 5G"] },
  { brand: "Fairphone", os: "Android", models: ["Fairphone 4", "Fairphone 5"] },
  { brand: "Nothing", os: "Android", models: ["Phone (3)"] },
  { brand: "Sharp", os: "Android", models: ["AQUOS sense6", "AQUOS sense7", "AQUOS sense8", "AQUOS sense9", "AQUOS R7", "AQUOS R8", "AQUOS R8 pro", "AQUOS wish3"] },
  { brand: "Rakuten", os: "Android", models: ["Rakuten Mini", "Rakuten Hand", "Rakuten Hand 5G", "Rakuten BIG"] },
  { brand: "Microsoft", os: "Windows", models: ["Surface Pro X", "Surface Pro 9 with 5G"] },
  { brand: "Microsoft", os: "Android", models: ["Surface Duo", "Surface Duo 2"] },
];

/** The shipped list, one entry per model, in the families' order. */
export const SHIPPED_DEVICES: readonly DeviceRow[] = FAMILIES.flatMap((family) =>
  family.models.map((model) => ({ brand: family.brand, model, os: family.os })),
);
