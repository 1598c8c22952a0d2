//! Signals that know one benchmark's task family, kept apart from the eyes that read any web
//! page, each with what it is for and its measured effect on the held-out split
//! (`docs/signals.md`, MiniWoB++ seeds 1001 and up; seeds 1–10 are what they were tuned on).
//! A rule here stays only while it pays on the held-out seeds; `FORAGER_WEIGHTS=<name>=0`
//! turns one off for the measurement.
//!
//! The others of the kind live where their reading is done, and are named here
//! ([`READINGS`]) so that a weight of 0 turns them off too: the arithmetic the page poses
//! (`crate::arithmetic`, simple-arithmetic and simple-algebra), the count of a kind of shape
//! (`counted_kind`, visual-addition), the items' "+" controls
//! (`crate::item_controls`, food ordering).

use super::{ClickPage, Lift, NAMED_AFFINITY};
use forager_protocol::observation::{Element, Observation};

/// The click signal of [`forward_not_reply`].
pub(crate) const FORWARD_NOT_REPLY: &str = "forward_not_reply";

/// The click signal of [`parity`].
pub(crate) const PARITY: &str = "parity";

/// The page signal of [`parity_marked`].
pub(crate) const PARITY_MARKED: &str = "parity_marked";

/// The reading of [`crate::arithmetic::solve_all`]: the answer to the page's arithmetic.
pub(crate) const PAGE_ARITHMETIC: &str = "page_arithmetic";

/// The reading of `counted_kind`: the page's count of the kind of shape the goal asks for.
pub(crate) const COUNTED_KIND: &str = "counted_kind";

/// The reading of [`crate::item_controls`]: the controls of the items the goal names.
pub(crate) const ITEM_CONTROLS: &str = "item_controls";

/// Readings written for MiniWoB++ task families that give values to type or items to press
/// rather than lift a click: a weight of 0 turns one off (for the held-out measurement), any
/// other weight leaves it on. Name and what it reads, as [`super::signals::catalogue`] has them.
pub(crate) const READINGS: &[(&str, &str)] = &[
    (
        PAGE_ARITHMETIC,
        "arithmetic the page poses (\"3 + 5 =\", \"x - 4 = 9\"): its answer is a value to type (MiniWoB++ simple-arithmetic, simple-algebra)",
    ),
    (
        COUNTED_KIND,
        "the page's count of the kind of shape the goal asks the number of (MiniWoB++ visual-addition)",
    ),
    (
        ITEM_CONTROLS,
        "the controls of the items the goal names by their words, pressed as often as it counts (MiniWoB++ order-food)",
    ),
];

/// What an "Odd" or "Even" control gains when it fits the number of its item.
pub(crate) const PARITY_LIFT: f64 = 0.3;

/// The factor of an "Odd" or "Even" control that does not fit its item's number.
pub(crate) const PARITY_MISFIT: f64 = 0.3;

/// The factor of a reply where the goal passes an item on: a reply goes back to its sender.
pub(crate) const REPLY_FACTOR: f64 = 0.5;

/// Someone's email for someone else is a forward, whatever the goal's verb ("give Etheline the
/// email from Doria"); a reply would go back to its sender. MiniWoB++'s email-inbox family.
pub(crate) fn forward_not_reply(page: &ClickPage<'_>, _: usize, element: &Element) -> Option<Lift> {
    passing_lift(page.reading.passes_on(), &element.name)
}

/// [`forward_not_reply`] for a goal that passes an item on (or not) and a control's name.
fn passing_lift(passes_on: bool, name: &str) -> Option<Lift> {
    if !passes_on {
        return None;
    }
    match name.trim().to_lowercase().as_str() {
        "forward" | "fwd" => Some(Lift::AtLeast(NAMED_AFFINITY)),
        "reply" | "reply all" => Some(Lift::Scale(REPLY_FACTOR)),
        _ => None,
    }
}

/// "Odd" or "Even" beside a number: the one that fits it first. MiniWoB++'s odd-or-even.
pub(crate) fn parity(_: &ClickPage<'_>, _: usize, element: &Element) -> Option<Lift> {
    parity_lift(element)
}

fn parity_lift(element: &Element) -> Option<Lift> {
    match crate::arithmetic::parity_fits(&element.name, &element.record) {
        Some(true) => Some(Lift::Add(PARITY_LIFT)),
        Some(false) => Some(Lift::Scale(PARITY_MISFIT)),
        None => None,
    }
}

/// Items that show one number with an "Odd" and an "Even" control: the share marked with the
/// one that fits, less those marked with the other; `None` on a page without such items.
pub(crate) fn parity_marked(observation: &Observation) -> Option<f64> {
    let (mut items, mut fit, mut misfit) = (0usize, 0usize, 0usize);
    for element in &observation.elements {
        match crate::arithmetic::parity_fits(&element.name, &element.record) {
            Some(true) => {
                items += 1;
                fit += usize::from(element.checked);
            }
            Some(false) => misfit += usize::from(element.checked),
            None => {}
        }
    }
    (items > 0).then(|| ((fit as f64 - misfit as f64) / items as f64).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::control;

    #[test]
    fn a_parity_control_that_fits_its_number_is_lifted_and_the_other_held_back() {
        let odd = control("button", "Odd", "7 Odd Even");
        let even = control("button", "Even", "7 Odd Even");
        assert_eq!(parity_lift(&odd), Some(Lift::Add(PARITY_LIFT)));
        assert_eq!(parity_lift(&even), Some(Lift::Scale(PARITY_MISFIT)));
        assert_eq!(parity_lift(&control("button", "Odd", "7 and 8")), None);
        assert_eq!(parity_lift(&control("button", "Submit", "7")), None);
    }

    #[test]
    fn passing_an_item_on_forwards_it_and_holds_a_reply_back() {
        assert_eq!(
            passing_lift(true, " Forward "),
            Some(Lift::AtLeast(NAMED_AFFINITY))
        );
        assert_eq!(passing_lift(true, "Reply"), Some(Lift::Scale(REPLY_FACTOR)));
        assert_eq!(passing_lift(false, "Reply"), None);
        assert_eq!(passing_lift(true, "Trash"), None);
    }

    #[test]
    fn numbers_marked_by_the_fitting_control_are_the_pages_progress() {
        let mut odd = control("button", "Odd", "7 Odd Even");
        let even = control("button", "Even", "7 Odd Even");
        let mut page = crate::policy::tests::page(vec![odd.clone(), even.clone()]);
        assert_eq!(parity_marked(&page), Some(0.0));
        odd.checked = true;
        page.elements = vec![odd, even];
        assert_eq!(parity_marked(&page), Some(1.0));
        page.elements = vec![control("button", "Submit", "")];
        assert_eq!(parity_marked(&page), None);
    }
}
