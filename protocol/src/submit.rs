//! The submit-shape classifier: which actions get a validator verdict.
//!
//! Always submit-shaped: any navigation (including history back), Enter (as a key press or
//! after a fill), and an accepted dialog. A click is submit-shaped when the accessible name of
//! the control *starts* with a commit verb ("Submit", "Save as draft", "Confirm password"
//! on a button). A fill is submit-shaped only with Enter: a field's accessible name labels what
//! is typed, not an action, so a field labelled "Confirm password" commits nothing.

use crate::action::ActionShape;
use crate::risk::normalise_name;

/// Verbs (and verb phrases) that commit something when they begin a control's name.
const COMMIT_VERBS: &[&str] = &[
    "submit",
    "send",
    "post",
    "publish",
    "buy",
    "purchase",
    "pay",
    "place",
    "order",
    "checkout",
    "check out",
    "confirm",
    "save",
    "create",
    "apply",
    "add",
    "update",
    "delete",
    "remove",
    "register",
    "sign up",
    "sign in",
    "log in",
    "login",
    "subscribe",
    "book",
    "reserve",
    "continue",
    "next",
    "finish",
    "complete",
    "proceed",
    "accept",
    "agree",
    "upload",
    "reply",
    "comment",
    "share",
    "request",
    "transfer",
    "donate",
    "verify",
    "search",
    "go",
];

/// Whether an action of this shape on a control with this accessible name is submit-shaped.
pub fn is_submit_shaped(shape: ActionShape, accessible_name: &str) -> bool {
    match shape {
        ActionShape::Navigate
        | ActionShape::Back
        | ActionShape::AcceptDialog
        | ActionShape::Fill { enter: true }
        | ActionShape::Press { enter: true } => true,
        ActionShape::Fill { enter: false }
        | ActionShape::Press { enter: false }
        | ActionShape::Select
        | ActionShape::Scroll
        | ActionShape::Hover
        | ActionShape::DismissDialog
        | ActionShape::Done => false,
        ActionShape::Click => starts_with_commit_verb(accessible_name),
    }
}

/// Whether a name begins with a commit verb, at a word boundary.
pub fn starts_with_commit_verb(accessible_name: &str) -> bool {
    let words = normalise_name(accessible_name);
    COMMIT_VERBS.iter().any(|verb| {
        words.starts_with(verb) && words.as_bytes().get(verb.len()).is_none_or(|&b| b == b' ')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        use ActionShape::*;
        let table: &[(ActionShape, &str, bool)] = &[
            // The lesson this classifier exists for: a field named like a commit is not one.
            (Fill { enter: false }, "Confirm password", false),
            (Fill { enter: true }, "Confirm password", true),
            (Click, "Confirm password", true),
            (Click, "Apply code", true),
            (Fill { enter: false }, "Apply code", false),
            (Click, "Save as draft", true),
            (Click, "Submit", true),
            (Click, "Place order", true),
            (Click, "Pay now", true),
            (Click, "Create account", true),
            (Click, "  save  ", true),
            (Click, "Saved items", false),
            (Click, "Paypal help", false),
            (Click, "Orders", false),
            (Click, "About us", false),
            (Click, "Password", false),
            (Click, "", false),
            (Navigate, "", true),
            (Back, "", true),
            (Press { enter: true }, "", true),
            (Press { enter: false }, "Submit", false),
            (AcceptDialog, "", true),
            (DismissDialog, "", false),
            (Select, "Confirm", false),
            (Done, "Submit", false),
        ];
        for &(shape, name, expected) in table {
            assert_eq!(
                is_submit_shaped(shape, name),
                expected,
                "{shape:?} on {name:?}"
            );
        }
    }
}
