/**
 * The string `format`s the real server checks in CRD schemas (apiextensions' supported formats,
 * checked by kube-openapi's strfmt registry). A format not in this list is not checked, as
 * there (the CRD may still declare it).
 */
import { isIP, isIPv4, isIPv6 } from 'node:net';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID_VERSION = (v: number) => new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${v}[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$`, 'i');
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/;
const MAC = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const HEX_COLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR =
  /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/;
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Go's time.ParseDuration units, plus the day and week units strfmt.Duration accepts. */
const DURATION = /^(\d+(\.\d+)?\s*(ns|us|µs|ms|s|m|h|d|w)\s*)+$/;

function validDate(y: string, m: string, d: string): boolean {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

function isDate(v: string): boolean {
  const m = DATE.exec(v);
  return m !== null && validDate(m[1], m[2], m[3]);
}

function isDateTime(v: string): boolean {
  const m = DATE_TIME.exec(v);
  if (!m || !validDate(m[1], m[2], m[3])) return false;
  return Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
}

function isUri(v: string): boolean {
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}

function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const ip = v.slice(0, slash);
  const bits = v.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const family = isIP(ip);
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function isIsbn10(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(s)) return false;
  const sum = [...s].reduce((acc, c, i) => acc + (c === 'X' ? 10 : Number(c)) * (10 - i), 0);
  return sum % 11 === 0;
}

function isIsbn13(v: string): boolean {
  const s = v.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(s)) return false;
  const sum = [...s].reduce((acc, c, i) => acc + Number(c) * (i % 2 === 0 ? 1 : 3), 0);
  return sum % 10 === 0;
}

const CHECKS: Readonly<Record<string, (v: string) => boolean>> = {
  bsonobjectid: (v) => BSON_OBJECT_ID.test(v),
  uri: isUri,
  email: (v) => EMAIL.test(v),
  hostname: (v) => v.length <= 255 && HOSTNAME.test(v),
  ipv4: isIPv4,
  ipv6: isIPv6,
  cidr: isCidr,
  mac: (v) => MAC.test(v),
  uuid: (v) => UUID.test(v),
  uuid3: (v) => UUID_VERSION(3).test(v),
  uuid4: (v) => UUID_VERSION(4).test(v),
  uuid5: (v) => UUID_VERSION(5).test(v),
  isbn: (v) => isIsbn10(v) || isIsbn13(v),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: (v) => {
    const s = v.replace(/[\s-]/g, '');
    return /^\d{13,19}$/.test(s) && luhn(s);
  },
  ssn: (v) => SSN.test(v),
  hexcolor: (v) => HEX_COLOR.test(v),
  rgbcolor: (v) => RGB_COLOR.test(v),
  byte: (v) => BASE64.test(v),
  password: () => true,
  date: isDate,
  duration: (v) => DURATION.test(v),
  datetime: isDateTime,
  'date-time': isDateTime,
};

/** The formats the real server checks (others are accepted unchecked). */
export const CHECKED_FORMATS: readonly string[] = Object.keys(CHECKS);

/** Whether `value` has string format `format`; true for formats the server does not check. */
export function hasFormat(value: string, format: string): boolean {
  const check = CHECKS[format];
  return check === undefined || check(value);
}
