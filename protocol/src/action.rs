//! Actions an agent takes on a page, and the locators that find their targets.
//!
//! A target carries a ranked chain of locators (CSS path first, then role + accessible name,
//! then visible text, then the position relative to a stable neighbour): when one no longer
//! resolves to the element (nothing found, or an element of another name), the next is tried. Fill values
//! that come from the task's inputs stay references to the input by name, so that a recorded
//! trajectory or a compiled workflow never bakes in a secret.
//!
//! [`ActionShape`], what kind of action one is, lives here, below the `risk` and `submit`
//! classifiers that read it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One way to find an element.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Locator {
    /// A CSS selector path.
    Css(String),
    /// An ARIA role and accessible name.
    Role {
        /// The role (`button`, `link`, `textbox`, …).
        role: String,
        /// The accessible name.
        name: String,
    },
    /// Visible text of the element.
    Text(String),
    /// Relative position to a stable neighbour: the `nth` (1-based) element with `role` after
    /// the first element whose own text is `anchor` (a heading, label, legend, table header or
    /// term), in document order. Survives renamed classes, reordered siblings elsewhere and a
    /// renamed control, as long as the neighbour stays.
    Near {
        /// The neighbour's text.
        anchor: String,
        /// The element's role.
        role: String,
        /// Which element of that role after the neighbour, from 1.
        nth: u32,
    },
    /// Inside a repeated item (a table row, a list item, a card) known by a short text of its
    /// own: the `nth` (1-based) element with `role` in the one item that has a piece of text
    /// reading `key` (letter case aside). "The country link in Mombasa's row": the key is what
    /// a workflow's parameter replaces, so that "Hamburg's row" finds a control whose name
    /// the goal never said. No item or two with the key: not found.
    InItem {
        /// A text of the item (a cell's), unique among the page's items.
        key: String,
        /// The element's role.
        role: String,
        /// Which element of that role in the item, from 1.
        nth: u32,
    },
    /// Known only by what it is about: the visible element with `role` whose name holds the
    /// most of `words` (a word matches a name's word that begins with it or that it begins
    /// with, four letters at least: "crash" finds "crashes"), at least half of them, and more
    /// than any other element. A remembered step re-aimed at the record another goal describes
    /// ("the dark mode request" where the workflow opened "the duplex printing crash"): the
    /// record's real name was never said. Two elements alike, or too few words: not found.
    Described {
        /// The description's words, lower case.
        words: Vec<String>,
        /// The element's role.
        role: String,
    },
}

impl Locator {
    /// The locator's kind, as documents name it: `css`, `role`, `text`, `near`, `item` or
    /// `described`.
    pub fn kind(&self) -> &'static str {
        match self {
            Locator::Css(_) => "css",
            Locator::Role { .. } => "role",
            Locator::Text(_) => "text",
            Locator::Near { .. } => "near",
            Locator::InItem { .. } => "item",
            Locator::Described { .. } => "described",
        }
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Locator::Css(css) => write!(f, "css={css}"),
            Locator::Role { role, name } => write!(f, "role={role}[name={name:?}]"),
            Locator::Text(text) => write!(f, "text={text:?}"),
            Locator::Near { anchor, role, nth } => {
                write!(f, "near={anchor:?} {role}#{nth}")
            }
            Locator::InItem { key, role, nth } => write!(f, "item={key:?} {role}#{nth}"),
            Locator::Described { words, role } => {
                write!(f, "described={:?} {role}", words.join(" "))
            }
        }
    }
}

/// The element an action is aimed at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Target {
    /// Ranked locators, most specific first; never empty for a valid action.
    pub locators: Vec<Locator>,
    /// The element's ARIA role (or the closest equivalent), for classification.
    pub role: String,
    /// The element's accessible name (possibly derived from label, placeholder or nearby text).
    pub name: String,
    /// What activating it sends, as its page declared it: what the risk classifier reads
    /// first, and what the network gate holds it to when it runs.
    #[serde(default)]
    pub sends: Sends,
}

impl Target {
    /// The key and role of its [`Locator::InItem`], if it has one.
    pub fn item(&self) -> Option<(&str, &str)> {
        self.locators.iter().find_map(|l| match l {
            Locator::InItem { key, role, .. } => Some((key.as_str(), role.as_str())),
            _ => None,
        })
    }

    /// The words and role of its [`Locator::Described`], if it has one.
    pub fn described(&self) -> Option<(&[String], &str)> {
        self.locators.iter().find_map(|l| match l {
            Locator::Described { words, role } => Some((words.as_slice(), role.as_str())),
            _ => None,
        })
    }

    /// How a label shows it: its name, or, for a control known only by the item it sits in
    /// or by what it is about (a remembered step bound to another row or record), that.
    fn shown(&self) -> String {
        if !self.name.is_empty() {
            return format!("{:?}", self.name);
        }
        match (self.item(), self.described()) {
            (Some((key, role)), _) => format!("the {role} in {key:?}'s item"),
            (None, Some((words, role))) => format!("the {role} about {:?}", words.join(" ")),
            (None, None) => format!("{:?}", self.name),
        }
    }
}

/// What activating a target sends, as the page declared it when the action was planned: a
/// link's `href`, or the method and action of the `<form>` a submit control (or Enter in a
/// field) submits. A claim, not a proof: while the action runs, the browser refuses any
/// request other than `GET`/`HEAD`/`OPTIONS` that its class does not allow (the network
/// gate), so a target that says `Get` and posts is caught.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sends {
    /// Not declared: a control with a script handler, a field, a page not read.
    #[default]
    Unknown,
    /// A `GET` navigation to this URL (a link, or a form whose method is `get`).
    Get {
        /// The URL, absolute; a form's without the values it will append.
        url: String,
    },
    /// A form posted to this URL.
    Post {
        /// The form's action, absolute.
        url: String,
    },
}

/// Where a fill's text comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FillValue {
    /// A value the policy chose (for example a quoted string from the goal).
    Literal(String),
    /// The task input with this name; resolved only when the action runs.
    Input(String),
}

/// One field of a form fill.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldValue {
    /// The field.
    pub target: Target,
    /// What to put in it: typed into a text field, chosen (by value or label) in a select.
    pub value: FillValue,
    /// Whether the field is a select (choose an option) rather than a text field (type).
    pub select: bool,
}

/// Something an agent does.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Action {
    /// Click an element.
    Click {
        /// What to click.
        target: Target,
    },
    /// Type a value into a field, optionally followed by Enter.
    Fill {
        /// The field.
        target: Target,
        /// What to type.
        value: FillValue,
        /// Press Enter afterwards.
        enter: bool,
    },
    /// Fill several fields of one form, then submit it: click `submit`, or press Enter in the
    /// last field when there is no submit control. One action, because typing alone changes
    /// nothing the fingerprint sees (values are transient) and would be pruned as no progress.
    FillForm {
        /// The fields, in order.
        fields: Vec<FieldValue>,
        /// The submit control, if the form has one.
        submit: Option<Target>,
    },
    /// Choose an option of a select element.
    Select {
        /// The select element.
        target: Target,
        /// The option's value or label.
        option: String,
    },
    /// Click each of several checkboxes, radio buttons or switches, in order: the choices a
    /// goal names that are not made yet, made in one action. One at a time they commute, and
    /// a search over their orders spends its budget on permutations of the same set.
    Check {
        /// The controls, in document order.
        targets: Vec<Target>,
    },
    /// Press a key (`Enter`, `Escape`, `ArrowDown`, …).
    Press {
        /// The key, as named in the DOM's `KeyboardEvent.key`.
        key: String,
    },
    /// Go to a URL (same origin unless the task allows more).
    Navigate {
        /// The absolute URL.
        url: String,
    },
    /// History back.
    Back,
    /// Declare the task finished.
    Done,
    // Added last: the variants before keep their encodings (signed artifacts stay valid).
    /// Scroll a box of text (a text area, a scrolling panel) to its top or bottom: what an
    /// agreement that unlocks at its end, or a page that checks what was read, reacts to. A
    /// box of controls needs none: clicking a control scrolls it into view.
    Scroll {
        /// The box.
        target: Target,
        /// Where to.
        to: ScrollEdge,
    },
    /// Click one control several times, settling after each: a calendar's `Prev` to the month
    /// a goal names, a stepper's `+` to a quantity. One action, because each click alone looks
    /// like a step nowhere (a month like any other) and a search spends its budget on the
    /// stations of a walk whose length the page already says.
    Repeat {
        /// What to click.
        target: Target,
        /// How many times (at least 2; a single click is [`Action::Click`]).
        times: u32,
    },
    /// Rest the pointer on an element without pressing: what opens a menu's submenu, whose
    /// item a click would choose (and so end the choosing).
    Hover {
        /// What to point at.
        target: Target,
    },
    /// Move sliders to values as a person does with the keyboard: each handle focused, `Home`,
    /// then arrow keys until the number that moves with it reads its value. One action,
    /// because each key press alone is a step nowhere; several sliders in one (in order),
    /// because one at a time they commute, as [`Action::Check`]'s choices do.
    Slide {
        /// The sliders and their values, in order.
        moves: Vec<SliderMove>,
    },
}

/// One slider of a [`Action::Slide`] and where it goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SliderMove {
    /// The slider (an `<input type=range>`, a `role=slider`, a widget's handle).
    pub target: Target,
    /// The value, as a number written in text (`48`, `-97`, `2.5`).
    pub value: String,
}

/// An end of a scrolling box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScrollEdge {
    /// Its start.
    Top,
    /// Its end.
    Bottom,
}

impl ScrollEdge {
    /// `top` or `bottom`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScrollEdge::Top => "top",
            ScrollEdge::Bottom => "bottom",
        }
    }
}

/// The shape of an action, as far as risk and submission are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ActionShape {
    /// A click on a control (link, button, clickable element).
    Click,
    /// Typing into a field; `enter` if the value is followed by Enter.
    Fill {
        /// Whether Enter is pressed after the value.
        enter: bool,
    },
    /// Choosing an option of a select.
    Select,
    /// Scrolling a box.
    Scroll,
    /// Resting the pointer on an element.
    Hover,
    /// A key press; `enter` if the key is Enter.
    Press {
        /// Whether the key is Enter.
        enter: bool,
    },
    /// Going to a URL.
    Navigate,
    /// History back.
    Back,
    /// Accepting a dialog (alert, confirm, prompt).
    AcceptDialog,
    /// Dismissing a dialog.
    DismissDialog,
    /// Declaring the task finished.
    Done,
}

impl Action {
    /// The shape used by the risk and submit classifiers.
    pub fn shape(&self) -> ActionShape {
        match self {
            Action::Click { .. } => ActionShape::Click,
            Action::Fill { enter, .. } => ActionShape::Fill { enter: *enter },
            Action::FillForm {
                submit: Some(_), ..
            } => ActionShape::Click,
            Action::FillForm { submit: None, .. } => ActionShape::Fill { enter: true },
            Action::Select { .. } => ActionShape::Select,
            Action::Check { .. } => ActionShape::Click,
            Action::Scroll { .. } => ActionShape::Scroll,
            Action::Repeat { .. } => ActionShape::Click,
            Action::Hover { .. } => ActionShape::Hover,
            // A value chosen in a control, as a select's option is.
            Action::Slide { .. } => ActionShape::Select,
            Action::Press { key } => ActionShape::Press {
                enter: key.eq_ignore_ascii_case("enter"),
            },
            Action::Navigate { .. } => ActionShape::Navigate,
            Action::Back => ActionShape::Back,
            Action::Done => ActionShape::Done,
        }
    }

    /// The target, for actions that have one.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Action::Click { target }
            | Action::Fill { target, .. }
            | Action::Select { target, .. }
            | Action::Scroll { target, .. }
            | Action::Repeat { target, .. }
            | Action::Hover { target } => Some(target),
            Action::Slide { moves } => moves.last().map(|m| &m.target),
            Action::FillForm {
                submit: Some(target),
                ..
            } => Some(target),
            Action::FillForm { fields, .. } => fields.last().map(|f| &f.target),
            Action::Check { targets } => targets.last(),
            Action::Press { .. } | Action::Navigate { .. } | Action::Back | Action::Done => None,
        }
    }

    /// Every target of the action (a form's fields, then its submit control).
    pub fn targets(&self) -> Vec<&Target> {
        match self {
            Action::Click { target }
            | Action::Fill { target, .. }
            | Action::Select { target, .. }
            | Action::Scroll { target, .. }
            | Action::Repeat { target, .. }
            | Action::Hover { target } => vec![target],
            Action::Slide { moves } => moves.iter().map(|m| &m.target).collect(),
            Action::FillForm { fields, submit } => fields
                .iter()
                .map(|f| &f.target)
                .chain(submit.as_ref())
                .collect(),
            Action::Check { targets } => targets.iter().collect(),
            Action::Press { .. } | Action::Navigate { .. } | Action::Back | Action::Done => {
                Vec::new()
            }
        }
    }

    /// The task inputs this action needs, by name.
    pub fn inputs(&self) -> Vec<&str> {
        fn input(value: &FillValue) -> Option<&str> {
            match value {
                FillValue::Input(name) => Some(name.as_str()),
                FillValue::Literal(_) => None,
            }
        }
        match self {
            Action::Fill { value, .. } => input(value).into_iter().collect(),
            Action::FillForm { fields, .. } => {
                fields.iter().filter_map(|f| input(&f.value)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// A short human label: `click "Search"`, `fill "Email" with <input email>`.
    pub fn label(&self) -> String {
        match self {
            Action::Click { target } => format!("click {}", target.shown()),
            Action::Fill {
                target,
                value,
                enter,
            } => {
                let value = match value {
                    FillValue::Literal(text) => format!("{text:?}"),
                    FillValue::Input(name) => format!("<input {name}>"),
                };
                let enter = if *enter { " + Enter" } else { "" };
                format!("fill {:?} with {value}{enter}", target.name)
            }
            Action::Select { target, option } => {
                format!("select {option:?} in {:?}", target.name)
            }
            Action::FillForm { fields, submit } => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let value = match &f.value {
                            FillValue::Literal(text) => format!("{text:?}"),
                            FillValue::Input(name) => format!("<input {name}>"),
                        };
                        format!("{:?}={value}", f.target.name)
                    })
                    .collect();
                match submit {
                    Some(submit) => {
                        format!("fill {} and click {:?}", fields.join(", "), submit.name)
                    }
                    None => format!("fill {} + Enter", fields.join(", ")),
                }
            }
            Action::Check { targets } => {
                let names: Vec<String> = targets.iter().map(|t| format!("{:?}", t.name)).collect();
                format!("check {}", names.join(", "))
            }
            Action::Scroll { target, to } => {
                format!("scroll {:?} to the {}", target.name, to.as_str())
            }
            Action::Repeat { target, times } => format!("click {:?} {times} times", target.name),
            Action::Hover { target } => format!("hover {:?}", target.name),
            Action::Slide { moves } => {
                let moves: Vec<String> = moves
                    .iter()
                    .map(|m| format!("{:?} to {}", m.target.name, m.value))
                    .collect();
                format!("slide {}", moves.join(", "))
            }
            Action::Press { key } => format!("press {key}"),
            Action::Navigate { url } => format!("navigate {url}"),
            Action::Back => "back".to_owned(),
            Action::Done => "done".to_owned(),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str) -> Target {
        Target {
            locators: vec![Locator::Css("#x".into())],
            role: "textbox".into(),
            name: name.into(),
            sends: Default::default(),
        }
    }

    #[test]
    fn shapes_and_labels() {
        let fill = Action::Fill {
            target: target("Email"),
            value: FillValue::Input("email".into()),
            enter: true,
        };
        assert_eq!(fill.shape(), ActionShape::Fill { enter: true });
        assert_eq!(fill.label(), "fill \"Email\" with <input email> + Enter");
        let press = Action::Press {
            key: "Enter".into(),
        };
        assert_eq!(press.shape(), ActionShape::Press { enter: true });
        assert!(Action::Back.target().is_none());
        let scroll = Action::Scroll {
            target: target("Agreement"),
            to: ScrollEdge::Bottom,
        };
        assert_eq!(scroll.shape(), ActionShape::Scroll);
        assert_eq!(scroll.label(), "scroll \"Agreement\" to the bottom");
        assert_eq!(scroll.targets().len(), 1);
        let repeat = Action::Repeat {
            target: target("Prev"),
            times: 3,
        };
        assert_eq!(repeat.shape(), ActionShape::Click);
        assert_eq!(repeat.label(), "click \"Prev\" 3 times");
        let hover = Action::Hover {
            target: target("Menu"),
        };
        assert_eq!(hover.shape(), ActionShape::Hover);
        assert_eq!(hover.label(), "hover \"Menu\"");
        assert_eq!(hover.targets().len(), 1);
        let slide = Action::Slide {
            moves: vec![
                SliderMove {
                    target: target("Volume"),
                    value: "-7".into(),
                },
                SliderMove {
                    target: target("Bass"),
                    value: "2.5".into(),
                },
            ],
        };
        assert_eq!(slide.shape(), ActionShape::Select);
        assert_eq!(slide.label(), "slide \"Volume\" to -7, \"Bass\" to 2.5");
        assert_eq!(slide.targets().len(), 2);
        assert_eq!(slide.target().map(|t| t.name.as_str()), Some("Bass"));
        assert_eq!(fill.target().map(|t| t.name.as_str()), Some("Email"));
    }
}
