//! The meaningful-output check for extractions.
//!
//! An extraction predicate holds only when the page gave back a real value. Extraction scripts
//! fail quietly: they return `null`, an empty string, `{}`, an object whose every field is null,
//! or a placeholder a template left behind. All of those are rejected here, so that a broken
//! selector can never be read as success.

use serde_json::Value;

/// Strings that stand for "no value" when they are the whole (trimmed, case-folded) output.
const PLACEHOLDERS: &[&str] = &[
    "null",
    "undefined",
    "none",
    "nil",
    "nan",
    "n/a",
    "na",
    "tbd",
    "todo",
    "unknown",
    "placeholder",
    "lorem ipsum",
    "[object object]",
    "-",
    "--",
    "...",
    "…",
    "?",
    "empty",
    "no data",
    "not found",
    "loading",
    "loading...",
    "loading…",
];

/// Whether an extraction's output carries a real value.
///
/// Rejects: `null`; empty or whitespace strings; placeholder strings (`"null"`, `"N/A"`,
/// `"lorem ipsum"`, `"{{price}}"`, `"${name}"`, `"<placeholder>"`, …); `{}` and `[]`; objects
/// and arrays none of whose members are meaningful (so `{"a": null, "b": ""}` is rejected).
/// Accepts numbers (zero included), booleans, other strings, and containers with at least one
/// meaningful member.
pub fn is_meaningful(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(_) => true,
        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
        Value::String(s) => is_meaningful_text(s),
        Value::Array(items) => items.iter().any(is_meaningful),
        Value::Object(fields) => fields.values().any(is_meaningful),
    }
}

/// The string half of [`is_meaningful`].
pub fn is_meaningful_text(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return false;
    }
    let folded = trimmed.to_lowercase();
    if PLACEHOLDERS.contains(&folded.as_str()) {
        return false;
    }
    !is_template_slot(trimmed)
}

/// `{{name}}`, `${name}`, `<name>`, `[name]`, `%name%`: a template slot nobody filled.
fn is_template_slot(text: &str) -> bool {
    let wrapped = |open: &str, close: &str| {
        text.len() > open.len() + close.len()
            && text.starts_with(open)
            && text.ends_with(close)
            && !text[open.len()..text.len() - close.len()].contains(char::is_whitespace)
    };
    wrapped("{{", "}}")
        || wrapped("${", "}")
        || wrapped("<", ">")
        || wrapped("[", "]")
        || wrapped("%", "%")
        || (text.starts_with("{{") && text.ends_with("}}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn rejects_empty_and_placeholder_outputs() {
        let rejected = [
            json!(null),
            json!(""),
            json!("   "),
            json!("null"),
            json!("NULL"),
            json!("undefined"),
            json!("N/A"),
            json!("Lorem ipsum"),
            json!("{{price}}"),
            json!("{{ price }}"),
            json!("${name}"),
            json!("<placeholder>"),
            json!("[object Object]"),
            json!("..."),
            json!({}),
            json!([]),
            json!({"title": null, "price": null}),
            json!({"title": "", "price": "N/A"}),
            json!([null, "", {}]),
            json!({"nested": {"deep": [null]}}),
        ];
        for value in rejected {
            assert!(!is_meaningful(&value), "{value} must be rejected");
        }
    }

    #[test]
    fn accepts_real_values() {
        let accepted = [
            json!(0),
            json!(42.5),
            json!(false),
            json!("ThinkPad X1 Carbon"),
            json!("€12.00"),
            json!("a < b"),
            json!({"title": "Widget", "price": null}),
            json!([null, "x"]),
            json!({"nested": {"deep": [1]}}),
        ];
        for value in accepted {
            assert!(is_meaningful(&value), "{value} must be accepted");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z ]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// A container is meaningful exactly when one of its members is; wrapping a value in an
        /// array or an object never changes the verdict.
        #[test]
        fn wrapping_preserves_the_verdict(value in json_value()) {
            let verdict = is_meaningful(&value);
            prop_assert_eq!(is_meaningful(&json!([value.clone()])), verdict);
            prop_assert_eq!(is_meaningful(&json!({"k": value.clone()})), verdict);
            prop_assert_eq!(is_meaningful(&json!([value, null, ""])), verdict);
        }
    }
}
