//! String formats that apiextensions validates (`supportedFormats` of
//! `apiextensions-apiserver/pkg/apiserver/validation/formats.go`, Kubernetes 1.33), with the
//! checks of kube-openapi's `strfmt` registry. Formats outside this list are ignored by the API
//! server, and so here.
//!
//! Deviations: `uri` (Go `url.ParseRequestURI`), `email` (Go `net/mail.ParseAddress`) and `mac`
//! are approximated by the common syntax of those parsers; `bsonobjectid` is 24 hex digits.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

/// A string format apiextensions validates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `bsonobjectid`: a BSON ObjectId, 24 hex digits.
    BsonObjectId,
    /// `uri`: an absolute URI or an absolute path (Go's `url.ParseRequestURI`).
    Uri,
    /// `email`: an e-mail address.
    Email,
    /// `hostname`: an RFC 1123 host name.
    Hostname,
    /// `ipv4`: an IPv4 address.
    Ipv4,
    /// `ipv6`: an IPv6 address.
    Ipv6,
    /// `cidr`: an IP network in CIDR notation.
    Cidr,
    /// `mac`: a MAC address.
    Mac,
    /// `uuid`: a UUID of any version.
    Uuid,
    /// `uuid3`: a version 3 UUID.
    Uuid3,
    /// `uuid4`: a version 4 UUID.
    Uuid4,
    /// `uuid5`: a version 5 UUID.
    Uuid5,
    /// `isbn`: an ISBN-10 or ISBN-13.
    Isbn,
    /// `isbn10`: an ISBN-10.
    Isbn10,
    /// `isbn13`: an ISBN-13.
    Isbn13,
    /// `creditcard`: a credit card number.
    CreditCard,
    /// `ssn`: a US social security number, 11 characters (`123-45-6789`).
    Ssn,
    /// `hexcolor`: a colour of 3 or 6 hex digits, `#` optional (`#fa0`, `ffaa00`).
    HexColor,
    /// `rgbcolor`: an `rgb(r, g, b)` colour.
    RgbColor,
    /// `byte`: base64-encoded data.
    Byte,
    /// `password`: any string.
    Password,
    /// `date`: an RFC 3339 full date (`2024-01-31`).
    Date,
    /// `duration`: a Go duration (`1h30m`).
    Duration,
    /// `date-time`: an RFC 3339 timestamp.
    DateTime,
}

fn re(p: &str) -> Regex {
    Regex::new(p).unwrap_or_else(|e| panic!("built-in format regex {p} must compile: {e}"))
}

static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static DATE_TIME_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$")
});
static SSN: LazyLock<Regex> = LazyLock::new(|| re(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| re(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    let c = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*";
    re(&format!(r"^rgb\({c},{c},{c}\)$"))
});
static CREDITCARD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$",
    )
});
static DURATION_PART: LazyLock<Regex> = LazyLock::new(|| re(r"((\d+)\s*([A-Za-zµ]+))"));
static URI_SCHEME: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z][A-Za-z0-9+.\-]*:"));
static EMAIL_ADDR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+)*@[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+)*$",
    )
});
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){7}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){19}|[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){7}|[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){19}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){2}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){3}|[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}){9})$",
    )
});

impl Format {
    /// The format of a schema's `format` string, if apiextensions validates it (names are
    /// normalised by dropping `-`, as go-openapi does: `date-time` == `datetime`).
    pub fn parse(name: &str) -> Option<Format> {
        let normalized: String = name.chars().filter(|c| *c != '-').collect();
        Some(match normalized.as_str() {
            "bsonobjectid" => Format::BsonObjectId,
            "uri" => Format::Uri,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "isbn" => Format::Isbn,
            "isbn10" => Format::Isbn10,
            "isbn13" => Format::Isbn13,
            "creditcard" => Format::CreditCard,
            "ssn" => Format::Ssn,
            "hexcolor" => Format::HexColor,
            "rgbcolor" => Format::RgbColor,
            "byte" => Format::Byte,
            "password" => Format::Password,
            "date" => Format::Date,
            "duration" => Format::Duration,
            "datetime" => Format::DateTime,
            _ => return None,
        })
    }

    /// Whether `s` is valid for this format.
    pub fn validates(self, s: &str) -> bool {
        match self {
            Format::BsonObjectId => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
            Format::Uri => is_request_uri(s),
            Format::Email => is_email(s),
            Format::Hostname => {
                HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
            }
            Format::Ipv4 => parse_ip_sloppy(s) && s.contains('.'),
            Format::Ipv6 => parse_ip_sloppy(s) && s.contains(':'),
            Format::Cidr => is_cidr(s),
            Format::Mac => MAC.is_match(s),
            Format::Uuid => UUID.is_match(s),
            Format::Uuid3 => UUID3.is_match(s),
            Format::Uuid4 => UUID4.is_match(s),
            Format::Uuid5 => UUID5.is_match(s),
            Format::Isbn => is_isbn10(s) || is_isbn13(s),
            Format::Isbn10 => is_isbn10(s),
            Format::Isbn13 => is_isbn13(s),
            Format::CreditCard => is_credit_card(s),
            Format::Ssn => s.len() == 11 && SSN.is_match(s),
            Format::HexColor => HEXCOLOR.is_match(s),
            Format::RgbColor => RGBCOLOR.is_match(s),
            Format::Byte => BASE64.is_match(s),
            Format::Password => true,
            Format::Date => is_date(s),
            Format::Duration => parse_duration(s).is_some(),
            Format::DateTime => is_date_time(s),
        }
    }
}

/// Go `time.Parse("2006-01-02", s)`.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &s[r];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    if !(1..=12).contains(&m) || d == 0 {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= days
}

/// strfmt `IsDateTime`.
pub fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Some(c) = DATE_TIME_TAIL.captures(parts[1]) else {
        return false;
    };
    let get = |i| c.get(i).map(|m| m.as_str()).unwrap_or("");
    get(1) <= "23" && get(2) <= "59" && get(3) <= "59"
}

/// Go `time.ParseDuration`, returning nanoseconds.
pub fn parse_go_duration(s: &str) -> Option<i128> {
    let mut rest = s;
    let mut neg = false;
    if let Some(r) = rest.strip_prefix('-') {
        neg = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix('+') {
        rest = r;
    }
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num = &rest[..num_end];
        if num.is_empty() || num == "." {
            return None;
        }
        let value: f64 = num.parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        let mult: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += value * mult;
        rest = &rest[unit_end..];
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let ns = total as i128;
    Some(if neg { -ns } else { ns })
}

/// strfmt `ParseDuration`: Go durations, or `<n> <unit>` sequences like `3 days`.
pub fn parse_duration(s: &str) -> Option<i128> {
    if let Some(d) = parse_go_duration(s) {
        return Some(d);
    }
    const UNITS: &[(&[&str], i128)] = &[
        (&["ns", "nano"], 1),
        (&["us", "µs", "micro"], 1_000),
        (&["ms", "milli"], 1_000_000),
        (&["s", "sec"], 1_000_000_000),
        (&["m", "min"], 60_000_000_000),
        (&["h", "hr", "hour"], 3_600_000_000_000),
        (&["d", "day"], 86_400_000_000_000),
        (&["w", "wk", "week"], 604_800_000_000_000),
    ];
    let mut ok = false;
    let mut dur: i128 = 0;
    for c in DURATION_PART.captures_iter(s) {
        let factor: i128 = c.get(2)?.as_str().parse().ok()?;
        let unit = c.get(3)?.as_str().trim().to_lowercase();
        for (variants, mult) in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || unit.eq_ignore_ascii_case(v) {
                    ok = true;
                    dur += factor * mult;
                }
            }
        }
    }
    ok.then_some(dur)
}

/// Go `net.ParseIP` (via `netutils.ParseIPSloppy`, which accepts leading zeros in IPv4).
fn parse_ip_sloppy(s: &str) -> bool {
    if s.parse::<Ipv6Addr>().is_ok() {
        return true;
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|v| v <= 255)
        })
    {
        return true;
    }
    s.parse::<Ipv4Addr>().is_ok()
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) || bits.len() > 3 {
        return false;
    }
    let Ok(bits) = bits.parse::<u32>() else {
        return false;
    };
    if ip.contains(':') {
        ip.parse::<Ipv6Addr>().is_ok() && bits <= 128
    } else {
        parse_ip_sloppy(ip) && bits <= 32
    }
}

/// Approximates Go `url.ParseRequestURI`: an absolute URI (scheme) or an absolute path, with
/// no ASCII control characters or spaces.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_ascii_control() || c == ' ') {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    URI_SCHEME.is_match(s)
}

/// Approximates Go `mail.ParseAddress`: `local@domain` or `Name <local@domain>`.
fn is_email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        (None, false) => s,
        _ => return false,
    };
    EMAIL_ADDR.is_match(addr)
}

fn strip_isbn(s: &str) -> String {
    s.chars().filter(|c| *c != ' ' && *c != '-').collect()
}

fn is_isbn10(s: &str) -> bool {
    let s = strip_isbn(s);
    let b = s.as_bytes();
    if b.len() != 10
        || !b[..9].iter().all(u8::is_ascii_digit)
        || !(b[9].is_ascii_digit() || b[9] == b'X')
    {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in b[..9].iter().enumerate() {
        sum += (i as u32 + 1) * u32::from(c - b'0');
    }
    let check = if b[9] == b'X' {
        10
    } else {
        u32::from(b[9] - b'0')
    };
    sum += 10 * check;
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let s = strip_isbn(s);
    let b = s.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let factors = [1u32, 3];
    let mut sum = 0u32;
    for (i, c) in b[..12].iter().enumerate() {
        sum += factors[i % 2] * u32::from(c - b'0');
    }
    (10 - sum % 10) % 10 == u32::from(b[12] - b'0')
}

fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(|c| c.is_ascii_digit()).collect();
    if !CREDITCARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for c in digits.bytes().rev() {
        let mut d = u32::from(c - b'0');
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
    }
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_formats() {
        assert_eq!(Format::parse("date-time"), Some(Format::DateTime));
        assert_eq!(Format::parse("int32"), None);
        assert_eq!(Format::parse("k8s-short-name"), None, "only from 1.34");
        assert!(Format::DateTime.validates("2024-01-02T03:04:05Z"));
        assert!(Format::DateTime.validates("2024-01-02T03:04:05.123+02:00"));
        assert!(!Format::DateTime.validates("2024-01-02 03:04:05"));
        assert!(!Format::DateTime.validates("2024-13-02T03:04:05Z"));
        assert!(Format::Date.validates("2024-02-29"));
        assert!(!Format::Date.validates("2023-02-29"));
        assert!(Format::Duration.validates("1h30m"));
        assert!(Format::Duration.validates("3 days"));
        assert!(!Format::Duration.validates("soon"));
        assert!(Format::Byte.validates("aGVsbG8="));
        assert!(!Format::Byte.validates("hello!"));
        assert!(Format::Ipv4.validates("10.0.0.1"));
        assert!(!Format::Ipv4.validates("::1"));
        assert!(Format::Ipv6.validates("::1"));
        assert!(Format::Cidr.validates("10.0.0.0/8"));
        assert!(!Format::Cidr.validates("10.0.0.0/33"));
        assert!(Format::Uuid.validates("123e4567-e89b-12d3-a456-426614174000"));
        assert!(!Format::Uuid.validates("not-a-uuid"));
        assert!(Format::Hostname.validates("artifactory.example.com"));
        assert!(!Format::Hostname.validates("bad_host!"));
        assert!(Format::Uri.validates("https://example.com/x"));
        assert!(!Format::Uri.validates("example"));
        assert!(Format::Email.validates("a@b.c"));
        assert!(!Format::Email.validates("nope"));
        assert!(Format::Mac.validates("00:1a:2b:3c:4d:5e"));
        assert!(Format::Isbn10.validates("0321751043"));
        assert!(Format::Isbn13.validates("978-0321751041"));
        assert!(Format::CreditCard.validates("4111 1111 1111 1111"));
        assert!(Format::HexColor.validates("#FFF"));
        assert!(Format::RgbColor.validates("rgb(255, 0, 10)"));
        assert!(Format::Ssn.validates("123-45-6789"));
    }
}
