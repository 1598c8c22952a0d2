//! A remembered workflow bound by its goal's **plan** rather than by its words: a goal of the
//! same shape ([`crate::plan::PlanShape`]: the act, the object, the conditions' fields and
//! operators, how the record is named) with other values and other wording reuses it. "Hand
//! the dark mode request over to bob" after "hand the duplex printing crash over to carol":
//! the assignee is a condition's value (`carol` → `bob`), and the record is *described*, so
//! the step that opened the old record (a link whose name holds most of "duplex printing
//! crash") is re-aimed at the element whose name holds most of "dark mode request"
//! ([`Locator::Described`]), its old name and address dropped.
//!
//! Conservative by construction, since a workflow that writes must never write another
//! record: every value of the template must be a value of the old plan (a condition's, the
//! record's number or name, the login's user) or stay word for word in the new goal, every
//! value the new plan changes must be a slot's, and a described record must be found among
//! the steps' clicked controls; else nothing binds.

use super::{
    ParameterKind, Piece, RememberedWorkflow, find_words, pieces, spelled_numbers, trim_end,
};
use crate::action::{Action, Locator, Sends, Target};
use crate::plan::{Act, Plan, Record};
use crate::risk::RiskClass;
use std::collections::BTreeMap;

impl super::GoalTemplate {
    /// The goal the template was made from: its slots filled with their values, an input's
    /// slot with the input's name (its value is never kept).
    pub fn goal(&self) -> String {
        let mut out = String::new();
        for piece in pieces(trim_end(&self.text)) {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Slot(i) => {
                    if let Some(p) = self.parameters.get(i) {
                        out.push_str(&p.value);
                    }
                }
            }
        }
        out
    }
}

impl RememberedWorkflow {
    /// The steps for `goal` when its plan has the shape of the workflow's goal's plan, with the
    /// new plan's values put where the old plan's were (see the module documentation);
    /// `None` when the shapes differ, a value of the template has no counterpart, the record
    /// the old goal described is not among the steps' clicked controls, or the task lacks an
    /// input the steps type.
    pub fn bind_by_plan(
        &self,
        goal: &str,
        inputs: &BTreeMap<String, String>,
        start_url: &str,
    ) -> Option<Vec<(Action, RiskClass)>> {
        let old = Plan::of(&self.template.goal());
        let new = Plan::of(goal);
        // A plan with neither a condition nor a record says too little to be a kind of task;
        // an edit without a condition is known only by its verb ("close", "reopen"), which
        // no shape holds; an order is no slot.
        if old.shape() != new.shape()
            || old.conditions.is_empty() && (old.record.is_none() || old.act == Act::Edit)
            || old.order != new.order
        {
            return None;
        }
        let pairs = value_pairs(&old, &new);
        // A value the new goal changes that no slot carries would be done as before: the
        // old record ("issue 1", opened by its title, for "issue 3") written again.
        let carried = |pair: &Pair| {
            pair.old.eq_ignore_ascii_case(&pair.new)
                || self.template.parameters.iter().any(|p| {
                    p.kind != ParameterKind::Input
                        && (p.value.eq_ignore_ascii_case(&pair.old)
                            || crate::amount::spelled(&p.value).as_deref()
                                == Some(pair.old.as_str()))
                })
        };
        if !pairs.iter().all(carried) {
            return None;
        }
        let values = self
            .template
            .parameters
            .iter()
            .map(|p| match p.kind {
                ParameterKind::Input => Some(p.value.clone()),
                ParameterKind::Quoted | ParameterKind::Word => new_value(&p.value, &pairs, goal),
            })
            .collect::<Option<Vec<String>>>()?;
        let mut steps = self.bind(&values, inputs, start_url)?;
        if let (Some(Record::Described { words: was }), Some(Record::Described { words: now })) =
            (&old.record, &new.record)
            && was != now
        {
            let mut found = false;
            for (action, _) in &mut steps {
                if let Action::Click { target }
                | Action::Repeat { target, .. }
                | Action::Hover { target } = action
                    && (describes(&target.name, was)
                        // A workflow learned from a pass of a re-aimed step.
                        || target
                            .described()
                            .is_some_and(|(words, _)| words == was.as_slice()))
                {
                    *target = Target {
                        locators: vec![Locator::Described {
                            words: now.clone(),
                            role: target.role.clone(),
                        }],
                        role: target.role.clone(),
                        name: String::new(),
                        // The old record's address would lead back to it.
                        sends: Sends::Unknown,
                    };
                    found = true;
                }
            }
            if !found {
                return None;
            }
        }
        Some(steps)
    }
}

/// One value of the old plan and its counterpart in the new one.
struct Pair {
    old: String,
    new: String,
    /// The new condition's phrase, where an amount spelled with its magnitude is found.
    phrase: String,
}

/// The old plan's values beside the new plan's, place by place (the shapes are equal).
fn value_pairs(old: &Plan, new: &Plan) -> Vec<Pair> {
    let mut pairs: Vec<Pair> = old
        .conditions
        .iter()
        .zip(&new.conditions)
        .map(|(o, n)| Pair {
            old: o.value.clone(),
            new: n.value.clone(),
            phrase: n.phrase.clone(),
        })
        .collect();
    let plain = |old: &str, new: &str| Pair {
        old: old.to_owned(),
        new: new.to_owned(),
        phrase: String::new(),
    };
    match (&old.record, &new.record) {
        (Some(Record::Number { number: o, .. }), Some(Record::Number { number: n, .. }))
        | (Some(Record::Name { name: o }), Some(Record::Name { name: n })) => {
            pairs.push(plain(o, n));
        }
        _ => {}
    }
    if let (Some(o), Some(n)) = (old.login_user(), new.login_user()) {
        pairs.push(plain(o, n));
    }
    pairs
}

/// A template value's counterpart: the new value of the old plan's value it is (an amount
/// in words as the new goal spells its amount), or itself where the new goal says it too.
fn new_value(value: &str, pairs: &[Pair], goal: &str) -> Option<String> {
    let spelled = crate::amount::spelled(value);
    for pair in pairs {
        if pair.old.eq_ignore_ascii_case(value) {
            return Some(pair.new.clone());
        }
        if spelled.as_deref() == Some(pair.old.as_str()) {
            // "5 million" typed as 5000000: the new goal's words for its amount.
            return spelled_numbers(&pair.phrase)
                .into_iter()
                .map(|(_, phrase)| phrase)
                .find(|p| crate::amount::spelled(p).as_deref() == Some(pair.new.as_str()));
        }
    }
    find_words(goal, value).map(|_| value.to_owned())
}

/// Whether a control's name holds at least half of a description's words (and one), a word
/// matching a name's word it begins or that begins it, four letters at least: the rule
/// [`Locator::Described`] finds elements by.
pub(crate) fn describes(name: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    let lower = name.to_lowercase();
    let have: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let alike = |w: &str, h: &str| {
        w == h || w.len().min(h.len()) >= 4 && (h.starts_with(w) || w.starts_with(h))
    };
    let held = words
        .iter()
        .filter(|w| {
            let w = w.to_lowercase();
            have.iter().any(|h| alike(&w, h))
        })
        .count();
    held * 2 >= words.len() && held > 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::FillValue;
    use crate::digest::Digest32;
    use crate::wire::EmbedderId;

    fn learned(goal: &str, start_url: &str, steps: &[(Action, RiskClass)]) -> RememberedWorkflow {
        let embedder = EmbedderId {
            name: "ngram".into(),
            digest: Digest32::of(b"test"),
            dim: 1,
        };
        RememberedWorkflow::remember(
            goal,
            start_url,
            steps,
            &BTreeMap::new(),
            embedder,
            vec![1.0],
            String::new(),
            String::new(),
            0,
        )
        .expect("remembered")
    }

    fn link(name: &str, url: &str) -> Target {
        Target {
            locators: vec![Locator::Role {
                role: "link".into(),
                name: name.into(),
            }],
            role: "link".into(),
            name: name.into(),
            sends: Sends::Get { url: url.into() },
        }
    }

    fn control(role: &str, name: &str) -> Target {
        Target {
            locators: vec![Locator::Role {
                role: role.into(),
                name: name.into(),
            }],
            role: role.into(),
            name: name.into(),
            sends: Sends::Unknown,
        }
    }

    /// "Hand the duplex printing crash over to carol", learned on a tracker: the record's
    /// link, the assignee's list, Save.
    fn handed_over() -> RememberedWorkflow {
        let steps = vec![
            (
                Action::Click {
                    target: link(
                        "Duplex printing crashes the driver",
                        "http://127.0.0.1:8080/issues/1",
                    ),
                },
                RiskClass::ReadOnly,
            ),
            (
                Action::Select {
                    target: control("combobox", "Assigned to"),
                    option: "carol".into(),
                },
                RiskClass::ReadOnly,
            ),
            (
                Action::Click {
                    target: control("button", "Save"),
                },
                RiskClass::ExternalSubmission,
            ),
        ];
        learned(
            "hand the duplex printing crash over to carol",
            "http://127.0.0.1:8080/issues",
            &steps,
        )
    }

    #[test]
    fn a_template_gives_back_its_goal() {
        let workflow = handed_over();
        assert_eq!(
            workflow.template.text,
            "hand the duplex printing crash over to {0}"
        );
        assert_eq!(
            workflow.template.goal(),
            "hand the duplex printing crash over to carol"
        );
    }

    #[test]
    fn a_record_described_otherwise_is_the_same_workflow_aimed_at_it() {
        let workflow = handed_over();
        let goal = "hand the dark mode request over to bob";
        assert!(workflow.template.bind(goal).is_none(), "not the words");
        let steps = workflow
            .bind_by_plan(goal, &BTreeMap::new(), "http://127.0.0.1:8080/issues")
            .expect("the same plan's shape");
        assert_eq!(steps.len(), 3);
        let Action::Click { target } = &steps[0].0 else {
            panic!("{:?}", steps[0]);
        };
        assert_eq!(
            target.locators,
            vec![Locator::Described {
                words: vec!["dark".into(), "mode".into(), "request".into()],
                role: "link".into()
            }]
        );
        assert!(target.name.is_empty(), "the old record's name is gone");
        assert_eq!(target.sends, Sends::Unknown, "and its address");
        assert_eq!(
            steps[0].0.label(),
            "click the link about \"dark mode request\""
        );
        let Action::Select { option, .. } = &steps[1].0 else {
            panic!("{:?}", steps[1]);
        };
        assert_eq!(option, "bob");
        assert_eq!(steps[2].1, RiskClass::ExternalSubmission);
    }

    #[test]
    fn another_shape_or_a_value_without_its_counterpart_binds_nothing() {
        let workflow = handed_over();
        let base = "http://127.0.0.1:8080/issues";
        let none = BTreeMap::new();
        // Another act: a delete is no hand-over.
        assert!(
            workflow
                .bind_by_plan("delete the dark mode request", &none, base)
                .is_none()
        );
        // A record by its number: another shape.
        assert!(
            workflow
                .bind_by_plan("hand issue 4 over to bob", &none, base)
                .is_none()
        );
        // The login's user changes, and no step carries it (the login was no step).
        let steps = vec![(
            Action::Click {
                target: control("button", "Close issue"),
            },
            RiskClass::DraftWrite,
        )];
        let closing = learned("Log in as alice and close issue 2", base, &steps);
        assert!(
            closing
                .bind_by_plan("Log in as bob and close issue 2", &none, base)
                .is_none(),
            "it would be done as alice"
        );
        assert!(
            closing
                .bind_by_plan("Log in as alice and reopen issue 2", &none, base)
                .is_none(),
            "an edit known only by its verb"
        );
    }

    #[test]
    fn a_described_record_no_step_clicked_binds_nothing() {
        // The record was reached by a typed search, whose words are not the description's.
        let steps = vec![
            (
                Action::Fill {
                    target: control("searchbox", "Search"),
                    value: FillValue::Literal("printer".into()),
                    enter: true,
                },
                RiskClass::ReadOnly,
            ),
            (
                Action::Select {
                    target: control("combobox", "Assigned to"),
                    option: "carol".into(),
                },
                RiskClass::ReadOnly,
            ),
        ];
        let workflow = learned(
            "hand the duplex printing crash over to carol",
            "http://127.0.0.1:8080/issues",
            &steps,
        );
        assert!(
            workflow
                .bind_by_plan(
                    "hand the dark mode request over to bob",
                    &BTreeMap::new(),
                    "http://127.0.0.1:8080/issues"
                )
                .is_none(),
            "it would write the old record"
        );
    }

    #[test]
    fn conditions_and_amounts_take_the_new_goals_values() {
        let steps = vec![(
            Action::Fill {
                target: control("spinbutton", "Population over"),
                value: FillValue::Literal("5000000".into()),
                enter: true,
            },
            RiskClass::ReadOnly,
        )];
        let workflow = learned(
            "Show the cities with more than 5 million inhabitants",
            "http://127.0.0.1:8080/cities",
            &steps,
        );
        let bound = workflow
            .bind_by_plan(
                "Which cities have more than 10 million inhabitants?",
                &BTreeMap::new(),
                "http://127.0.0.1:8080/cities",
            )
            .expect("one condition of the same field and operator");
        let Action::Fill { value, .. } = &bound[0].0 else {
            panic!("{bound:?}");
        };
        assert_eq!(value, &FillValue::Literal("10000000".into()));
    }

    #[test]
    fn a_description_is_held_by_most_of_its_words() {
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(describes(
            "Duplex printing crashes the driver",
            &words("duplex printing crash")
        ));
        assert!(describes(
            "Dark mode makes the sidebar unreadable",
            &words("dark mode request")
        ));
        assert!(!describes("Issues", &words("dark mode request")));
        assert!(
            !describes("Mode", &words("dark mode request")),
            "one of three"
        );
        assert!(!describes("Anything", &[]));
        assert!(
            !describes("Crashes", &words("cra")),
            "short words match whole"
        );
    }
}
