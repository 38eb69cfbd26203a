// The sandbox catalog's mobile networks: for each destination it sells, the public operators a
// visitor's eSIM roams onto and the technologies offered. Written from the operators' public
// coverage pages and the GSMA's public listings as known in 2026-11; an illustration for the
// sandbox, not a roaming agreement. A production catalog states its own (the import's
// `networks`). Destinations absent here (uninhabited territories with no public mobile network:
// AQ, BV, GS, HM, PN, TF, UM) get no package in the sandbox: a package must name its networks.
import type { PackageNetwork } from "./catalog-facts.ts";
import { parseTechnologies } from "./catalog-facts.ts";

/** One line per destination: `CC Operator=TECH/TECH, Operator=TECH`. */
// biome-ignore format: one destination per line
const TABLE = `
AD Andorra Telecom=3G/4G/5G
AE Etisalat by e&=4G/5G, du=4G/5G
AF Roshan=2G/3G/4G, Afghan Wireless=2G/3G/4G, MTN Afghanistan=2G/3G
AG Digicel=3G/4G, Flow=3G/4G
AI Digicel=3G/4G, Flow=3G/4G
AL Vodafone Albania=4G/5G, One Albania=4G/5G
AM Team Telecom Armenia=3G/4G, Viva Armenia=3G/4G, Ucom=3G/4G
AO Unitel=3G/4G, Movicel=3G/4G
AR Claro=3G/4G, Movistar=3G/4G, Personal=3G/4G
AS Bluesky=3G/4G
AT A1=4G/5G, Magenta Telekom=4G/5G, Drei=4G/5G
AU Telstra=4G/5G, Optus=4G/5G, Vodafone=4G/5G
AW Digicel=3G/4G, Setar=3G/4G
AX Ålcom=4G/5G, Elisa=4G
AZ Azercell=3G/4G, Bakcell=3G/4G, Nar=3G/4G
BA BH Telecom=3G/4G, m:tel=3G/4G, HT Eronet=3G/4G
BB Digicel=3G/4G, Flow=3G/4G
BD Grameenphone=3G/4G, Robi=3G/4G, Banglalink=3G/4G
BE Proximus=4G/5G, Orange Belgium=4G/5G, Base=4G/5G
BF Orange Burkina Faso=3G/4G, Moov Africa=3G/4G
BG A1 Bulgaria=4G/5G, Yettel=4G/5G, Vivacom=4G/5G
BH Batelco=4G/5G, Zain Bahrain=4G/5G, stc Bahrain=4G/5G
BI Lumitel=3G/4G, Econet Leo=3G
BJ MTN Benin=3G/4G, Moov Africa=3G/4G
BL Orange Caraïbe=3G/4G, Digicel=3G/4G
BM One Communications=4G, Digicel=4G
BN DST=4G/5G, Progresif=4G
BO Entel=3G/4G, Tigo=3G/4G, Viva=3G/4G
BQ Digicel=3G/4G, Flow=3G/4G
BR Vivo=4G/5G, Claro=4G/5G, TIM=4G/5G
BS BTC=4G, Aliv=4G
BT B-Mobile=3G/4G, TashiCell=3G/4G
BW Mascom=3G/4G, Orange Botswana=3G/4G, BTC=3G/4G
BY A1 Belarus=3G/4G, MTS Belarus=3G/4G, life:)=3G/4G
BZ Digi=3G/4G, Smart=3G/4G
CA Rogers=4G/5G, Bell=4G/5G, Telus=4G/5G
CC Telstra=4G
CD Vodacom Congo=3G/4G, Orange RDC=3G/4G, Airtel=3G/4G
CF Orange Centrafrique=2G/3G, Telecel=2G/3G
CG MTN Congo=3G/4G, Airtel=3G/4G
CH Swisscom=4G/5G, Sunrise=4G/5G, Salt=4G/5G
CI Orange Côte d'Ivoire=3G/4G, MTN=3G/4G, Moov Africa=3G/4G
CK Vodafone Cook Islands=3G/4G
CL Entel=4G/5G, Movistar=4G/5G, Claro=4G/5G, WOM=4G/5G
CM MTN Cameroon=3G/4G, Orange Cameroun=3G/4G
CN China Mobile=4G/5G, China Unicom=4G/5G, China Telecom=4G/5G
CO Claro=4G, Movistar=4G, Tigo=4G
CR Kölbi=3G/4G, Claro=3G/4G, Liberty=3G/4G
CU Cubacel=3G/4G
CV CVMóvel=3G/4G, Unitel T+=3G/4G
CW Digicel=3G/4G, Flow=3G/4G
CX Telstra=4G
CY Cyta=4G/5G, Epic=4G/5G, PrimeTel=4G
CZ O2=4G/5G, T-Mobile=4G/5G, Vodafone=4G/5G
DE Telekom=4G/5G, Vodafone=4G/5G, O2=4G/5G
DJ Djibouti Telecom=3G/4G
DK TDC=4G/5G, Telenor=4G/5G, Telia=4G/5G, 3=4G/5G
DM Digicel=3G/4G, Flow=3G/4G
DO Claro=4G, Altice=4G, Viva=4G
DZ Mobilis=3G/4G, Djezzy=3G/4G, Ooredoo=3G/4G
EC Claro=3G/4G, Movistar=3G/4G, CNT=3G/4G
EE Telia=4G/5G, Elisa=4G/5G, Tele2=4G/5G
EG Vodafone Egypt=3G/4G, Orange Egypt=3G/4G, Etisalat by e&=3G/4G, WE=4G
EH Maroc Telecom=3G/4G, Orange Maroc=3G/4G, inwi=3G/4G
ER Eritel=2G/3G
ES Movistar=4G/5G, Vodafone=4G/5G, Orange=4G/5G, Yoigo=4G/5G
ET Ethio Telecom=3G/4G, Safaricom Ethiopia=4G
FI Elisa=4G/5G, DNA=4G/5G, Telia=4G/5G
FJ Vodafone Fiji=3G/4G, Digicel=3G/4G
FK Sure=2G/4G
FM FSM Telecom=3G/4G
FO Føroya Tele=4G/5G, Nora=4G
FR Orange=4G/5G, SFR=4G/5G, Bouygues Telecom=4G/5G, Free Mobile=4G/5G
GA Airtel Gabon=3G/4G, Moov Africa=3G/4G
GB EE=4G/5G, Vodafone=4G/5G, O2=4G/5G, Three=4G/5G
GD Digicel=3G/4G, Flow=3G/4G
GE Magti=3G/4G, Silknet=3G/4G, Cellfie=3G/4G
GF Orange Caraïbe=3G/4G, SFR Caraïbe=3G/4G, Digicel=3G/4G
GG Sure=4G/5G, JT=4G, Airtel-Vodafone=4G
GH MTN Ghana=3G/4G, Telecel=3G/4G, AT Ghana=3G/4G
GI Gibtelecom=4G/5G
GL Tusass=3G/4G
GM Africell=3G/4G, QCell=3G/4G
GN Orange Guinée=3G/4G, MTN=3G/4G
GP Orange Caraïbe=3G/4G/5G, SFR Caraïbe=3G/4G, Digicel=3G/4G
GQ GETESA=3G/4G, Muni=3G
GR Cosmote=4G/5G, Vodafone=4G/5G, Nova=4G/5G
GT Tigo=3G/4G, Claro=3G/4G
GU Docomo Pacific=4G/5G, GTA=4G/5G, IT&E=4G
GW Orange Bissau=3G/4G, MTN=3G
GY GTT=3G/4G, Digicel=3G/4G
HK CSL=4G/5G, 3HK=4G/5G, SmarTone=4G/5G, China Mobile Hong Kong=4G/5G
HN Tigo=3G/4G, Claro=3G/4G
HR Hrvatski Telekom=4G/5G, A1 Hrvatska=4G/5G, Telemach=4G/5G
HT Digicel=3G/4G, Natcom=3G/4G
HU Magyar Telekom=4G/5G, Yettel=4G/5G, One Hungary=4G/5G
ID Telkomsel=4G/5G, Indosat Ooredoo Hutchison=4G/5G, XL Axiata=4G/5G
IE Vodafone=4G/5G, Three=4G/5G, Eir=4G/5G
IL Partner=4G/5G, Cellcom=4G/5G, Pelephone=4G/5G, HOT Mobile=4G
IM Manx Telecom=4G/5G, Sure=4G
IN Airtel=4G/5G, Jio=4G/5G, Vi=4G
IO Sure=2G/4G
IQ Zain Iraq=3G/4G, Asiacell=3G/4G, Korek=3G/4G
IR MCI=3G/4G, Irancell=3G/4G, RighTel=3G/4G
IS Síminn=4G/5G, Vodafone Iceland=4G/5G, Nova=4G/5G
IT TIM=4G/5G, Vodafone=4G/5G, WindTre=4G/5G, Iliad=4G/5G
JE JT=4G/5G, Sure=4G, Airtel-Vodafone=4G
JM Digicel=3G/4G, Flow=3G/4G
JO Zain Jordan=4G/5G, Orange Jordan=4G/5G, Umniah=4G/5G
JP NTT Docomo=4G/5G, SoftBank=4G/5G, KDDI au=4G/5G
KE Safaricom=3G/4G/5G, Airtel Kenya=3G/4G
KG Beeline=3G/4G, MegaCom=3G/4G, O!=3G/4G
KH Smart Axiata=4G, Cellcard=4G, Metfone=4G
KI ATHKL=3G/4G
KM Comores Telecom=3G/4G, Telco=3G/4G
KN Digicel=3G/4G, Flow=3G/4G
KP Koryolink=3G
KR SK Telecom=4G/5G, KT=4G/5G, LG U+=4G/5G
KW Zain Kuwait=4G/5G, Ooredoo=4G/5G, stc Kuwait=4G/5G
KY Digicel=4G, Flow=4G
KZ Beeline=3G/4G, Kcell=3G/4G, Tele2=3G/4G
LA Lao Telecom=3G/4G, Unitel=3G/4G, ETL=3G/4G
LB Alfa=3G/4G, Touch=3G/4G
LC Digicel=3G/4G, Flow=3G/4G
LI Swisscom=4G/5G, Salt=4G/5G, Telecom Liechtenstein=4G/5G
LK Dialog=4G/5G, Mobitel=4G, Hutch=4G
LR Orange Liberia=3G/4G, Lonestar Cell MTN=3G/4G
LS Vodacom Lesotho=3G/4G, Econet Telecom Lesotho=3G/4G
LT Telia=4G/5G, Bitė=4G/5G, Tele2=4G/5G
LU POST=4G/5G, Tango=4G/5G, Orange Luxembourg=4G/5G
LV LMT=4G/5G, Tele2=4G/5G, Bite=4G/5G
LY Libyana=3G/4G, Al Madar=3G/4G
MA Maroc Telecom=3G/4G, Orange Maroc=3G/4G, inwi=3G/4G
MC Monaco Telecom=4G/5G
MD Orange Moldova=4G/5G, Moldcell=4G
ME Crnogorski Telekom=4G/5G, One Montenegro=4G/5G, m:tel=4G
MF Orange Caraïbe=3G/4G, SFR Caraïbe=3G/4G, Digicel=3G/4G
MG Telma=3G/4G, Orange Madagascar=3G/4G, Airtel=3G/4G
MH NTA=3G/4G
MK Makedonski Telekom=4G/5G, A1 Makedonija=4G/5G
ML Orange Mali=3G/4G, Moov Africa Malitel=3G/4G
MM MPT=4G, ATOM=4G, Ooredoo Myanmar=4G, Mytel=4G
MN Unitel=3G/4G, Mobicom=3G/4G, Skytel=3G/4G
MO CTM=4G/5G, 3 Macau=4G/5G, China Telecom Macau=4G/5G
MP Docomo Pacific=4G, IT&E=4G
MQ Orange Caraïbe=3G/4G/5G, SFR Caraïbe=3G/4G, Digicel=3G/4G
MR Mauritel=3G/4G, Mattel=3G/4G, Chinguitel=3G/4G
MS Flow=3G/4G
MT Epic=4G/5G, GO=4G/5G, Melita=4G/5G
MU my.t mobile=4G/5G, Emtel=4G/5G
MV Dhiraagu=4G/5G, Ooredoo Maldives=4G/5G
MW Airtel Malawi=3G/4G, TNM=3G/4G
MX Telcel=4G/5G, AT&T México=4G/5G, Movistar=4G
MY Maxis=4G/5G, CelcomDigi=4G/5G, U Mobile=4G/5G
MZ Vodacom Mozambique=3G/4G, Movitel=3G/4G, Tmcel=3G
NA MTC=3G/4G, Paratus=4G
NC OPT-NC Mobilis=3G/4G
NE Airtel Niger=3G/4G, Zamani Telecom=3G/4G, Moov Africa=3G
NF Norfolk Telecom=4G
NG MTN Nigeria=3G/4G/5G, Airtel Nigeria=3G/4G, Glo=3G/4G, 9mobile=3G/4G
NI Claro=3G/4G, Tigo=3G/4G
NL KPN=4G/5G, Vodafone=4G/5G, Odido=4G/5G
NO Telenor=4G/5G, Telia=4G/5G, Ice=4G/5G
NP Nepal Telecom=3G/4G, Ncell=3G/4G
NR Digicel=3G/4G
NU Telecom Niue=2G/4G
NZ One NZ=4G/5G, Spark=4G/5G, 2degrees=4G/5G
OM Omantel=4G/5G, Ooredoo Oman=4G/5G, Vodafone Oman=4G/5G
PA Tigo=3G/4G, Claro=3G/4G, +Móvil=3G/4G
PE Claro=4G, Movistar=4G, Entel=4G, Bitel=4G
PF Vini=3G/4G, Vodafone Polynésie=3G/4G
PG Digicel=3G/4G, bmobile-Vodafone=3G/4G
PH Smart=4G/5G, Globe=4G/5G, DITO=4G/5G
PK Jazz=3G/4G, Zong=3G/4G, Telenor Pakistan=3G/4G, Ufone=3G/4G
PL Orange Polska=4G/5G, Play=4G/5G, Plus=4G/5G, T-Mobile=4G/5G
PM SPM Telecom=3G/4G, Globaltel=3G/4G
PR Claro=4G/5G, T-Mobile=4G/5G, Liberty=4G/5G
PS Jawwal=2G/3G, Ooredoo Palestine=2G/3G
PT MEO=4G/5G, Vodafone=4G/5G, NOS=4G/5G
PW PNCC=3G/4G
PY Tigo=3G/4G, Personal=3G/4G, Claro=3G/4G
QA Ooredoo=4G/5G, Vodafone Qatar=4G/5G
RE Orange Réunion=4G/5G, SFR Réunion=4G/5G, Free Réunion=4G
RO Orange Romania=4G/5G, Vodafone=4G/5G, Digi=4G/5G
RS Yettel=4G/5G, mts=4G/5G, A1 Srbija=4G/5G
RU MTS=3G/4G, MegaFon=3G/4G, Beeline=3G/4G, Tele2=3G/4G
RW MTN Rwanda=3G/4G, Airtel Rwanda=3G/4G
SA stc=4G/5G, Mobily=4G/5G, Zain KSA=4G/5G
SB Our Telekom=3G/4G, bmobile-Vodafone=3G/4G
SC Airtel Seychelles=3G/4G, Cable & Wireless=3G/4G
SD Zain Sudan=3G/4G, MTN Sudan=3G/4G, Sudani=3G/4G
SE Telia=4G/5G, Tele2=4G/5G, Telenor=4G/5G, 3=4G/5G
SG Singtel=4G/5G, StarHub=4G/5G, M1=4G/5G
SH Sure=4G
SI Telekom Slovenije=4G/5G, A1 Slovenija=4G/5G, Telemach=4G/5G
SJ Telenor=4G, Telia=4G
SK Orange Slovensko=4G/5G, Slovak Telekom=4G/5G, O2=4G/5G, 4ka=4G
SL Orange Sierra Leone=3G/4G, Africell=3G/4G
SM TIM San Marino=4G/5G, Vodafone=4G
SN Orange Sénégal=3G/4G/5G, Free Sénégal=3G/4G, Expresso=3G
SO Hormuud=3G/4G, Somtel=3G/4G, Golis=3G/4G
SR Telesur=3G/4G, Digicel=3G/4G
SS MTN South Sudan=3G, Zain South Sudan=3G
ST CST=3G/4G, Unitel STP=3G/4G
SV Claro=3G/4G, Tigo=3G/4G, Movistar=3G/4G
SX Telem=3G/4G, Flow=3G/4G
SY Syriatel=3G/4G, MTN Syria=3G/4G
SZ Eswatini MTN=3G/4G, Eswatini Mobile=3G/4G
TC Digicel=4G, Flow=4G
TD Airtel Tchad=3G/4G, Moov Africa=3G/4G
TG Togocom=3G/4G, Moov Africa=3G/4G
TH AIS=4G/5G, True=4G/5G, dtac=4G/5G
TJ Tcell=3G/4G, Megafon Tajikistan=3G/4G, Babilon-M=3G/4G
TK Teletok=4G
TL Telkomcel=3G/4G, Telemor=3G/4G, Timor Telecom=3G/4G
TM TMCell=3G/4G
TN Ooredoo Tunisie=3G/4G, Orange Tunisie=3G/4G, Tunisie Telecom=3G/4G
TO Digicel=3G/4G, U-Call=3G/4G
TR Turkcell=4G, Vodafone=4G, Türk Telekom=4G
TT bmobile=4G, Digicel=4G
TV Tuvalu Telecom=4G
TW Chunghwa Telecom=4G/5G, Taiwan Mobile=4G/5G, FarEasTone=4G/5G
TZ Vodacom Tanzania=3G/4G, Airtel Tanzania=3G/4G, Yas=3G/4G
UA Kyivstar=4G, Vodafone Ukraine=4G, lifecell=4G
UG MTN Uganda=3G/4G, Airtel Uganda=3G/4G
US AT&T=4G/5G, T-Mobile=4G/5G, Verizon=4G/5G
UY Antel=4G/5G, Movistar=4G, Claro=4G
UZ Beeline=3G/4G, Ucell=3G/4G, Mobiuz=3G/4G, Uzmobile=3G/4G
VA TIM=4G/5G, Vodafone=4G/5G
VC Digicel=3G/4G, Flow=3G/4G
VE Movistar=3G/4G, Digitel=3G/4G, Movilnet=3G/4G
VG Digicel=4G, Flow=4G, CCT=4G
VI Viya=4G, Liberty=4G
VN Viettel=4G/5G, Vinaphone=4G/5G, MobiFone=4G/5G
VU Digicel=3G/4G, Vodafone Vanuatu=3G/4G
WF SPT Manuia=4G
WS Digicel=3G/4G, Vodafone Samoa=3G/4G
XK Vala=3G/4G, IPKO=3G/4G
YE Yemen Mobile=3G, Sabafon=3G, YOU=3G
YT Orange Mayotte=4G, SFR Réunion=4G
ZA Vodacom=4G/5G, MTN=4G/5G, Cell C=4G, Telkom=4G/5G
ZM MTN Zambia=3G/4G, Airtel Zambia=3G/4G, Zamtel=3G/4G
ZW Econet=3G/4G, NetOne=3G/4G
`;

function parseLine(line: string): [string, PackageNetwork[]] {
  const country_code = line.slice(0, 2);
  const networks = line
    .slice(3)
    .split(", ")
    .map((entry) => {
      const [name, technologies] = entry.split("=");
      const parsed = parseTechnologies(technologies ?? "");
      if (!name || parsed === null)
        throw new Error(`sandbox networks: bad entry "${entry}" for ${country_code}`);
      return { country_code, name, technologies: parsed };
    });
  return [country_code, networks];
}

const BY_COUNTRY: ReadonlyMap<string, readonly PackageNetwork[]> = new Map(
  TABLE.trim()
    .split("\n")
    .map((line) => parseLine(line.trim())),
);

/** The sandbox's networks of one destination; empty when it has no public mobile network. */
export function sandboxNetworks(country_code: string): readonly PackageNetwork[] {
  return BY_COUNTRY.get(country_code) ?? [];
}
