// How a phone installs an eSIM, written once: the LPA string and the iOS and Android install
// links built from it. The Esim object, the Order's purchases and the confirmation email all use
// these, so the API and the email can never give a traveller two different links for one eSIM.
// In the base because notifications and esims are both domains and neither may import the other.

/** The LPA activation code string an eSIM-capable phone understands (GSMA SGP.22 4.1). */
export function lpaString(smdp_address: string, activation_code: string): string {
  return `LPA:1$${smdp_address}$${activation_code}`;
}

/** Apple's universal link that opens the eSIM installer with this LPA string (iOS 17.4+). */
export const IOS_INSTALL_BASE = "https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=";
/** Android's equivalent link (Android 10+ phones with the eSIM setup handler). */
export const ANDROID_INSTALL_BASE = "https://esimsetup.android.com/esim_qrcode_provisioning?carddata=";

/** The path of an eSIM's install page (travellers/install-page.route.ts), from its token. */
export function installPagePath(install_token: string): string {
  return `/install/${install_token}`;
}

/** The page's address as a traveller follows it: PUBLIC_BASE_URL (no trailing slash) and the path. */
export function installPageUrl(public_base_url: string, install_token: string): string {
  return `${public_base_url}${installPagePath(install_token)}`;
}

export type InstallKit = {
  qr_code: string;
  activation_code: string;
  smdp_address: string;
  ios_install_url: string;
  android_install_url: string;
};

/** Everything a partner's app or a traveller needs to install the profile, from its two parts. */
export function installKit(smdp_address: string, activation_code: string): InstallKit {
  const lpa = lpaString(smdp_address, activation_code);
  const carddata = encodeURIComponent(lpa);
  return {
    qr_code: lpa,
    activation_code,
    smdp_address,
    ios_install_url: `${IOS_INSTALL_BASE}${carddata}`,
    android_install_url: `${ANDROID_INSTALL_BASE}${carddata}`,
  };
}
