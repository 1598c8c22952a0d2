//! Amounts as goals write them: a plain number ("5", "2.5", "10,000"), and a number with its
//! magnitude written out ("5 million", "2.5k") read as the digits a form field wants
//! (`5000000`, `2500`). Shared by the eyes' comparisons (`forager_node::comparison`) and the
//! workflow memory's templates ([`crate::recall`]).

/// Words after a number, or short suffixes on it, that multiply it.
pub const MAGNITUDES: &[(&str, f64)] = &[
    ("thousand", 1e3),
    ("k", 1e3),
    ("million", 1e6),
    ("millions", 1e6),
    ("m", 1e6),
    ("mn", 1e6),
    ("billion", 1e9),
    ("billions", 1e9),
    ("bn", 1e9),
];

/// A plain number ("5", "2.5", "10,000"), not a date or a code.
pub fn number(text: &str) -> Option<f64> {
    let plain = text.replace(',', "");
    if plain.is_empty() || !plain.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    plain.parse().ok()
}

/// The factor a magnitude word stands for (`million` → 1e6), any letter case.
pub fn magnitude(word: &str) -> Option<f64> {
    MAGNITUDES
        .iter()
        .find(|(m, _)| m.eq_ignore_ascii_case(word))
        .map(|(_, factor)| *factor)
}

/// A number as a field wants it: no exponent, no trailing ".0".
pub fn written(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// The digits of an amount a phrase spells with its magnitude ("5 million", "2.5k" →
/// `5000000`, `2500`); `None` for anything else, a bare number included (that is typed as
/// written).
pub fn spelled(phrase: &str) -> Option<String> {
    let mut words = phrase.split_whitespace();
    let first = words.next()?;
    let (value, factor) = match (words.next(), words.next()) {
        (Some(word), None) => (number(first)?, magnitude(word)?),
        (None, None) => {
            let lower = first.to_ascii_lowercase();
            MAGNITUDES
                .iter()
                .filter(|(m, _)| m.len() <= 2)
                .find_map(|(m, factor)| Some((number(lower.strip_suffix(m)?)?, *factor)))?
        }
        _ => return None,
    };
    Some(written(value * factor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_read_as_digits() {
        assert_eq!(spelled("5 million").as_deref(), Some("5000000"));
        assert_eq!(spelled("12 Thousand").as_deref(), Some("12000"));
        assert_eq!(spelled("1,200 million").as_deref(), Some("1200000000"));
        assert_eq!(spelled("2.5k").as_deref(), Some("2500"));
        assert_eq!(spelled("5"), None, "typed as written");
        assert_eq!(spelled("five million"), None);
        assert_eq!(spelled("5 million people"), None);
        assert_eq!(number("10,000"), Some(10_000.0));
        assert_eq!(number("2024-05-01"), None);
        assert_eq!(written(2.5), "2.5");
    }
}
