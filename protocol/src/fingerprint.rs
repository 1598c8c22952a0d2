//! The environment fingerprint: the identity of a page state.
//!
//! Two observations with one fingerprint are the same state. The fingerprint hashes three
//! things, each normalised so that what changes on every load does not change it:
//!
//! 1. the URL without query and fragment (scheme and host lower-cased);
//! 2. the accessibility snapshot, one element per line, with element ids, refs and current
//!    values dropped, times of day and long hex tokens (session ids, nonces) masked, and the
//!    lines sorted (so layout order does not matter, but a new element does);
//! 3. the sorted list of tool and form names on the page.
//!
//! The snapshot format is `role "name" key=value …`, one element a line; the normaliser drops
//! the keys in [`TRANSIENT_KEYS`]. The hash is SHA-256 (an adversarial page must not be able to
//! collide two states), truncated to 128 bits.
//!
//! Also the fingerprint *family* ([`family`]: the URL path with digits masked, the headings, the
//! form names: the kind of page a workflow step expects, which a reproduction compares) and the
//! page's [`main_heading`].

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Attribute keys whose values are per-load noise, dropped from snapshot lines.
pub const TRANSIENT_KEYS: &[&str] = &["id", "ref", "nodeid", "backendid", "value", "focused"];

/// The 128-bit identity of a page state: 32 lower-case hex digits in JSON, 16 bytes on the
/// wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(pub [u8; 16]);

impl Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&self.to_hex())
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            Fingerprint::from_hex(&text).ok_or_else(|| {
                serde::de::Error::custom("not a 32-digit lower-case hex fingerprint")
            })
        } else {
            <[u8; 16]>::deserialize(deserializer).map(Fingerprint)
        }
    }
}

impl Fingerprint {
    /// Hashes raw bytes under a domain tag; for environments (such as simulated sites) whose
    /// states have their own identity and no accessibility snapshot.
    pub fn of_bytes(domain: &str, bytes: &[u8]) -> Fingerprint {
        let mut hasher = Sha256::new();
        write_field(&mut hasher, domain.as_bytes());
        write_field(&mut hasher, bytes);
        truncate(&hasher.finalize())
    }

    /// Lower-case hex.
    pub fn to_hex(&self) -> String {
        data_encoding::HEXLOWER.encode(&self.0)
    }

    /// Parses 32 lower-case hex digits.
    pub fn from_hex(text: &str) -> Option<Fingerprint> {
        let bytes = data_encoding::HEXLOWER.decode(text.as_bytes()).ok()?;
        Some(Fingerprint(bytes.try_into().ok()?))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", self.to_hex())
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// The fingerprint of a page state, as DESIGN.md defines it.
pub fn fingerprint<S: AsRef<str>>(
    url: &str,
    accessibility_snapshot: &str,
    tool_names: &[S],
) -> Fingerprint {
    let mut hasher = Sha256::new();
    write_field(&mut hasher, b"forager/fingerprint/v1");
    write_field(&mut hasher, normalise_url(url).as_bytes());
    let lines = normalise_snapshot(accessibility_snapshot);
    write_field(&mut hasher, &(lines.len() as u64).to_le_bytes());
    for line in &lines {
        write_field(&mut hasher, line.as_bytes());
    }
    let mut tools: Vec<&str> = tool_names.iter().map(|t| t.as_ref().trim()).collect();
    tools.sort_unstable();
    write_field(&mut hasher, &(tools.len() as u64).to_le_bytes());
    for tool in tools {
        write_field(&mut hasher, tool.as_bytes());
    }
    truncate(&hasher.finalize())
}

/// The fingerprint family of a page state: the kind of page rather than the exact state. It
/// hashes the URL's path with every run of digits masked (`/order/1042` and `/order/7` are one
/// family), the page's headings (snapshot lines of role `heading`, normalised as for the
/// fingerprint) and its form names, and nothing else: a new link, a reordered list or renamed
/// CSS classes leave it unchanged, a page of another kind does not. Compiled workflows expect it
/// after each step.
pub fn family<S: AsRef<str>>(
    url: &str,
    accessibility_snapshot: &str,
    tool_names: &[S],
) -> Fingerprint {
    let mut hasher = Sha256::new();
    write_field(&mut hasher, b"forager/fingerprint-family/v1");
    let path = url::Url::parse(url.trim())
        .map(|u| u.path().to_owned())
        .unwrap_or_else(|_| normalise_url(url));
    write_field(&mut hasher, mask_digits(&path).as_bytes());
    let headings: Vec<String> = normalise_snapshot(accessibility_snapshot)
        .into_iter()
        .filter(|line| line.starts_with("heading "))
        .map(|line| mask_digits(&line))
        .collect();
    write_field(&mut hasher, &(headings.len() as u64).to_le_bytes());
    for line in &headings {
        write_field(&mut hasher, line.as_bytes());
    }
    let mut tools: Vec<&str> = tool_names.iter().map(|t| t.as_ref().trim()).collect();
    tools.sort_unstable();
    tools.dedup();
    write_field(&mut hasher, &(tools.len() as u64).to_le_bytes());
    for tool in tools {
        write_field(&mut hasher, tool.as_bytes());
    }
    truncate(&hasher.finalize())
}

/// Every run of ASCII digits replaced by `#`.
pub fn mask_digits(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The page's main heading, from its snapshot: the name of the first heading of the highest
/// level present (`heading "Name" level=1` lines), if any.
pub fn main_heading(accessibility_snapshot: &str) -> Option<String> {
    let mut best: Option<(u32, String)> = None;
    for line in accessibility_snapshot.lines() {
        let Some(rest) = line.trim().strip_prefix("heading ") else {
            continue;
        };
        let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        let Some(Ok(name)) = stream.next() else {
            continue;
        };
        let tail = &rest[stream.byte_offset()..];
        let level = tail
            .split_whitespace()
            .find_map(|t| t.strip_prefix("level="))
            .and_then(|l| l.parse::<u32>().ok())
            .unwrap_or(9);
        let name = name.trim().to_owned();
        if !name.is_empty() && best.as_ref().is_none_or(|(b, _)| level < *b) {
            best = Some((level, name));
        }
    }
    best.map(|(_, name)| name)
}

/// Length-prefixed, so that field boundaries cannot be shifted to forge a collision.
fn write_field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn truncate(digest: &[u8]) -> Fingerprint {
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    Fingerprint(out)
}

/// The URL without query and fragment, scheme and host lower-cased. A string that does not
/// parse as a URL is cut at its first `?` or `#`.
pub fn normalise_url(url: &str) -> String {
    match url::Url::parse(url.trim()) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => {
            let end = url.find(['?', '#']).unwrap_or(url.len());
            url[..end].trim().to_owned()
        }
    }
}

/// Snapshot lines with transient parts removed, sorted. Blank lines are dropped.
pub fn normalise_snapshot(snapshot: &str) -> Vec<String> {
    let mut lines: Vec<String> = snapshot
        .lines()
        .map(normalise_line)
        .filter(|line| !line.is_empty())
        .collect();
    lines.sort_unstable();
    lines
}

fn normalise_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for token in tokens(line.trim()) {
        if is_transient_attribute(token) {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        mask_volatile(token, &mut out);
    }
    out
}

/// Splits on whitespace outside double quotes, so `"Add to cart"` stays one token.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        rest = rest.trim_start();
        if rest.is_empty() {
            return None;
        }
        let mut in_quotes = false;
        let mut escaped = false;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_quotes => escaped = true,
                '"' => in_quotes = !in_quotes,
                c if c.is_whitespace() && !in_quotes => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        let (token, tail) = rest.split_at(end);
        rest = tail;
        Some(token)
    })
}

fn is_transient_attribute(token: &str) -> bool {
    // `[ref=e12]` (bracketed) and `id=main` (bare) forms.
    let bare = token.trim_start_matches('[').trim_end_matches(']');
    match bare.split_once('=') {
        Some((key, _)) => TRANSIENT_KEYS
            .iter()
            .any(|transient| key.eq_ignore_ascii_case(transient)),
        None => bare.eq_ignore_ascii_case("focused"),
    }
}

/// Masks times of day (`12:34`, `12:34:56`) and runs of 12 or more hex digits (nonces, session
/// ids, hashes), which change between loads of the same state.
fn mask_volatile(token: &str, out: &mut String) {
    let chars: Vec<char> = token.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let after_digit = i > 0 && chars[i - 1].is_ascii_digit();
        if let Some(len) = time_at(&chars[i..]).filter(|_| !after_digit) {
            out.push_str("<time>");
            i += len;
            continue;
        }
        let hex_run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() || **c == '-')
            .count();
        let hex_digits = chars[i..i + hex_run]
            .iter()
            .filter(|c| c.is_ascii_hexdigit())
            .count();
        let starts_word = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        if starts_word && hex_digits >= 12 && chars[i..i + hex_run].iter().any(char::is_ascii_digit)
        {
            out.push_str("<hex>");
            i += hex_run;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
}

/// Length of a `H:MM` / `HH:MM` / `HH:MM:SS` time at the start of `chars`, if there is one.
fn time_at(chars: &[char]) -> Option<usize> {
    let digits = |from: usize, n: usize| {
        chars.len() >= from + n && chars[from..from + n].iter().all(char::is_ascii_digit)
    };
    let hour = if digits(0, 2) {
        2
    } else if digits(0, 1) {
        1
    } else {
        return None;
    };
    if chars.get(hour) != Some(&':') || !digits(hour + 1, 2) {
        return None;
    }
    let mut len = hour + 3;
    if chars.get(len) == Some(&':') && digits(len + 1, 2) {
        len += 3;
    }
    // Not part of a longer number such as 123:45.
    if chars.get(len).is_some_and(char::is_ascii_digit) {
        return None;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SNAPSHOT: &str = "\
heading \"Results\" level=1
link \"ThinkPad X1\" [ref=e12] href=/p/1
textbox \"Search\" id=q value=\"laptop\"
button \"Add to cart\" ref=e14
";

    fn fp(url: &str, snapshot: &str) -> Fingerprint {
        fingerprint(url, snapshot, &["search-form"])
    }

    #[test]
    fn query_and_fragment_do_not_change_it() {
        let base = fp("https://shop.example/search", SNAPSHOT);
        assert_eq!(fp("https://shop.example/search?q=x&page=2", SNAPSHOT), base);
        assert_eq!(fp("https://shop.example/search#top", SNAPSHOT), base);
        assert_eq!(fp("HTTPS://SHOP.example/search?", SNAPSHOT), base);
        assert_ne!(fp("https://shop.example/other", SNAPSHOT), base);
    }

    #[test]
    fn element_ids_and_values_do_not_change_it() {
        let base = fp("https://shop.example/search", SNAPSHOT);
        let renumbered = SNAPSHOT
            .replace("[ref=e12]", "[ref=e99]")
            .replace("ref=e14", "ref=e3")
            .replace("id=q", "id=query")
            .replace("value=\"laptop\"", "value=\"desktop computer\"");
        assert_eq!(fp("https://shop.example/search", &renumbered), base);
        let focused = SNAPSHOT.replace("id=q", "id=q focused");
        assert_eq!(fp("https://shop.example/search", &focused), base);
    }

    #[test]
    fn order_and_transient_tokens_do_not_change_it() {
        let base = fp("https://x.example/", SNAPSHOT);
        let mut lines: Vec<&str> = SNAPSHOT.lines().collect();
        lines.reverse();
        assert_eq!(fp("https://x.example/", &lines.join("\n")), base);

        let a = "text \"Updated 12:04:55\"\nlink \"Session 3f9a2b7c41d0e8aa\"";
        let b = "text \"Updated 09:17:02\"\nlink \"Session 0011aabbccddeeff00\"";
        assert_eq!(fp("https://x.example/", a), fp("https://x.example/", b));
    }

    #[test]
    fn a_new_element_changes_it() {
        let base = fp("https://shop.example/search", SNAPSHOT);
        let more = format!("{SNAPSHOT}alert \"Out of stock\"\n");
        assert_ne!(fp("https://shop.example/search", &more), base);
        // Even a duplicate of an existing element: there is one more of it.
        let duplicate = format!("{SNAPSHOT}button \"Add to cart\" ref=e15\n");
        assert_ne!(fp("https://shop.example/search", &duplicate), base);
        // A changed accessible name is a changed state.
        let renamed = SNAPSHOT.replace("Add to cart", "Added to cart");
        assert_ne!(fp("https://shop.example/search", &renamed), base);
    }

    #[test]
    fn tool_names_are_sorted_and_count() {
        let s = SNAPSHOT;
        let url = "https://x.example/";
        assert_eq!(
            fingerprint(url, s, &["b", "a"]),
            fingerprint(url, s, &["a", "b"])
        );
        assert_ne!(
            fingerprint(url, s, &["a"]),
            fingerprint(url, s, &["a", "b"])
        );
        assert_ne!(
            fingerprint::<&str>(url, s, &[]),
            fingerprint(url, s, &["a"])
        );
    }

    #[test]
    fn field_boundaries_cannot_be_shifted() {
        // The same bytes split differently between URL and snapshot must differ.
        assert_ne!(
            fingerprint::<&str>("https://x.example/a", "b", &[]),
            fingerprint::<&str>("https://x.example/", "ab", &[])
        );
    }

    #[test]
    fn fingerprints_are_hex_in_json_and_bytes_on_the_wire() {
        let f = Fingerprint([0xab; 16]);
        let json = serde_json::to_string(&f).expect("json");
        assert_eq!(json, format!("\"{}\"", "ab".repeat(16)));
        assert_eq!(serde_json::from_str::<Fingerprint>(&json).expect("back"), f);
        assert!(serde_json::from_str::<Fingerprint>("\"AB\"").is_err());
        assert_eq!(
            crate::codec::canonical_bytes(&f).expect("bytes"),
            vec![0xab; 16]
        );
    }

    #[test]
    fn the_family_ignores_links_order_and_numbers_but_not_headings() {
        let family = |url: &str, snapshot: &str| super::family(url, snapshot, &["search"]);
        let base = family("http://h/order/1042?x=1", SNAPSHOT);
        // Another order number, another link, another order of lines: the same family.
        let more = format!("link \"Help\"\n{SNAPSHOT}");
        assert_eq!(family("http://h/order/7", &more), base);
        let reversed: String = SNAPSHOT.lines().rev().map(|l| format!("{l}\n")).collect();
        assert_eq!(family("http://h/order/1042", &reversed), base);
        // Another heading, another path or another form: another family.
        assert_ne!(
            family("http://h/order/1042", &SNAPSHOT.replace("Results", "Cart")),
            base
        );
        assert_ne!(family("http://h/orders/1042", SNAPSHOT), base);
        assert_ne!(
            super::family("http://h/order/1042", SNAPSHOT, &["login"]),
            base
        );
        assert_eq!(mask_digits("/p/12/x3y45"), "/p/#/x#y#");
    }

    #[test]
    fn the_main_heading_is_the_first_of_the_highest_level() {
        let snapshot = "link \"Home\"\nheading \"Section\" level=2\nheading \"Title \\\"quoted\\\"\" level=1\nheading \"Other\" level=1";
        assert_eq!(main_heading(snapshot).as_deref(), Some("Title \"quoted\""));
        assert_eq!(main_heading("link \"Home\""), None);
        assert_eq!(main_heading("heading \"\" level=1"), None);
    }

    #[test]
    fn times_and_numbers() {
        let mut out = String::new();
        mask_volatile("at\u{a0}9:05,", &mut out);
        assert_eq!(out, "at\u{a0}<time>,");
        out.clear();
        mask_volatile("123:45", &mut out);
        assert_eq!(out, "123:45");
        out.clear();
        mask_volatile("\"Order 2024\"", &mut out);
        assert_eq!(out, "\"Order 2024\"");
    }

    proptest! {
        #[test]
        fn any_line_order_gives_the_same_fingerprint(
            lines in prop::collection::vec("[a-z]{1,6} \"[A-Za-z ]{0,12}\"", 0..12),
            seed in any::<u64>(),
        ) {
            let mut shuffled = lines.clone();
            // A deterministic shuffle from the seed.
            let mut state = seed;
            for i in (1..shuffled.len()).rev() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                shuffled.swap(i, (state >> 33) as usize % (i + 1));
            }
            let url = "https://x.example/p";
            prop_assert_eq!(
                fingerprint::<&str>(url, &lines.join("\n"), &[]),
                fingerprint::<&str>(url, &shuffled.join("\n"), &[])
            );
        }
    }
}
