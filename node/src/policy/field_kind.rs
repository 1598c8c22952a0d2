//! What kind of field an element is, and the value given to it, as the fill and the plan both
//! need: a list (a `select` or a combobox with options), a list of comparison operators, a
//! placeholder option that is no choice, a field that takes lines of text.

use super::{is_text_field, target_of};
use forager_protocol::action::{FieldValue, FillValue};
use forager_protocol::comparison;
use forager_protocol::observation::{Element, SelectOption};

/// A placeholder option ("- column -", "Sort...", "don't care"): no choice at all.
pub(super) fn placeholder(option: &SelectOption) -> bool {
    let label = option.label.trim();
    option.value.is_empty()
        && (label.starts_with('-') || label.ends_with("...") || label.ends_with('…'))
        || label.starts_with("- ")
}

/// A field that takes lines of text: a text area, or an element edited in place (a rich-text
/// editor: `contenteditable`, ProseMirror, Draftail, TinyMCE's body).
pub(super) fn multi_line(element: &Element) -> bool {
    is_text_field(element)
        && (element.tag == "textarea" || !matches!(element.tag.as_str(), "input" | "select"))
}

/// A list to choose from: a `select`, or a combobox that shows its options.
pub(super) fn is_list(element: &Element) -> bool {
    element.role == "combobox" && !element.options.is_empty()
}

/// A list whose options are comparison operators ("=", "contains", "greater than"), as a
/// filter row's middle list is.
pub(super) fn operator_list(element: &Element) -> bool {
    let options: Vec<(String, String)> = element
        .options
        .iter()
        .map(|o| (o.label.clone(), o.value.clone()))
        .collect();
    comparison::is_operator_list(&options)
}

/// An option as a list wants it chosen: by its value, or its label where it has none.
pub(super) fn option_value(option: &SelectOption) -> String {
    if option.value.is_empty() {
        option.label.clone()
    } else {
        option.value.clone()
    }
}

/// A list's option to choose.
pub(super) fn select(element: &Element, value: String) -> FieldValue {
    FieldValue {
        target: target_of(element),
        value: FillValue::Literal(value),
        select: true,
    }
}

/// Text to type into a field.
pub(super) fn typed(element: &Element, value: String) -> FieldValue {
    FieldValue {
        target: target_of(element),
        value: FillValue::Literal(value),
        select: false,
    }
}
