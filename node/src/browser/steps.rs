//! What the search's environment and the workflow replayer both do on a tab: carry out one
//! action (resolving targets along their locator chains, typing inputs by name, settling
//! after), and check a task's success predicates.
//!
//! Every action of the search, of a verification's replay and of `forager replay` goes through
//! `perform_gated` (the network gate set for the action's class), which returns the `Heal` when a
//! fallback locator found the target.

use super::tab::{OriginGuard, Refused, Tab};
use crate::environment::EnvError;
use forager_protocol::meaningful::is_meaningful;
use forager_protocol::observation::Observation;
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::{Action, FillValue, Target, TaskSpec};
use std::collections::BTreeMap;

/// A step whose target was found by a locator other than the first of its chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heal {
    /// The locator's position in the chain (0 is the first).
    pub index: u32,
    /// The locator, as text (`role=link[name="…"]`).
    pub locator: String,
}

impl Heal {
    fn of(target: &Target, index: usize) -> Option<Heal> {
        (index > 0).then(|| Heal {
            index: index as u32,
            locator: target
                .locators
                .get(index)
                .map(ToString::to_string)
                .unwrap_or_default(),
        })
    }

    /// The heal further down its chain of two (a form heals as its most healed field).
    fn deeper(a: Option<Heal>, b: Option<Heal>) -> Option<Heal> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b.index > a.index { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// The value a fill types: a literal, or the task input by that name.
fn input_value(inputs: &BTreeMap<String, String>, value: &FillValue) -> Result<String, EnvError> {
    match value {
        FillValue::Literal(text) => Ok(text.clone()),
        FillValue::Input(name) => inputs
            .get(name)
            .cloned()
            .ok_or_else(|| EnvError::Other(format!("the task has no input named {name:?}"))),
    }
}

/// What carrying out an action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Performed {
    /// The heal, when a target was found by a fallback locator.
    pub heal: Option<Heal>,
    /// Whether the action loaded a new document (a history entry that `back` can undo); an
    /// action that only changed the current document cannot be undone by going back.
    pub new_document: bool,
}

/// Carries out one action on a tab and waits for the page to settle.
/// Carries out one action with the tab's network gate set for its class: open while it runs
/// when the class allows writes (`risk::allows_writes`), closed after. A write refused while
/// it ran shows the action to be riskier than rated: [`EnvError::RiskUnderestimated`], by the
/// worst refused request's method.
pub(crate) async fn perform_gated(
    tab: &Tab,
    action: &Action,
    class: forager_protocol::RiskClass,
    page: &str,
    inputs: &BTreeMap<String, String>,
    guard: &OriginGuard,
) -> Result<Performed, EnvError> {
    use forager_protocol::risk::{class_of_request, class_of_url, saves_view_state};
    let stray = tab.begin_action(class, page);
    if let Some(first) = stray.first() {
        tracing::info!(
            refused = stray.len(),
            first = %format!("{} {}", first.method, first.url),
            "the network gate refused writes between actions"
        );
    }
    let performed = perform(tab, action, inputs, guard).await;
    let refused = tab.end_action();
    // An action that commits nothing (no commit verb, no Enter, no navigation: opening a
    // menu, a note, typing) whose writes only save the page's own view: refused, and no sign
    // that the action was rated too low.
    let commits =
        forager_protocol::submit::is_submit_shaped(action.shape(), &committed_name(action));
    if !refused.is_empty()
        && !commits
        && refused
            .iter()
            .all(|r| r.does.is_none() && !r.elsewhere && saves_view_state(&r.method, &r.url))
    {
        tab.count_view_state(refused.len());
        tracing::info!(action = %action.label(), refused = refused.len(), first = %format!("{} {}", refused[0].method, refused[0].url), "writes of the page's own view refused");
        return performed;
    }
    // A write to another record than the page names: not this action's to send, whatever
    // its class.
    if let Some(stray) = refused.iter().find(|r| r.elsewhere) {
        let request = format!("{} {}", stray.method, stray.url);
        tracing::info!(action = %action.label(), %request, page, "a write to another record than the page's: refused");
        return Err(EnvError::WriteElsewhere { request });
    }
    // What a refused request shows: its method's class, the class of the handler its URL
    // names (a page load of `/item/3/delete`), or what its body says it does, the highest.
    let shows = |r: &Refused| {
        class_of_request(&r.method)
            .max(class_of_url(&r.url).unwrap_or(forager_protocol::RiskClass::ReadOnly))
            .max(r.does.unwrap_or(forager_protocol::RiskClass::ReadOnly))
    };
    if let Some(worst) = refused.iter().max_by_key(|r| shows(r)) {
        let request = format!("{} {}", worst.method, worst.url);
        tracing::info!(action = %action.label(), %class, %request, "a request beyond the action's class: refused");
        return Err(EnvError::RiskUnderestimated {
            class: shows(worst),
            request,
        });
    }
    performed
}

/// The accessible name the submit-shape classifier reads for an action: its target's, or its
/// form's submit control's.
fn committed_name(action: &Action) -> String {
    match action {
        Action::Click { target } | Action::Repeat { target, .. } | Action::Hover { target } => {
            target.name.clone()
        }
        Action::FillForm { submit, .. } => {
            submit.as_ref().map_or(String::new(), |t| t.name.clone())
        }
        _ => String::new(),
    }
}

pub(crate) async fn perform(
    tab: &Tab,
    action: &Action,
    inputs: &BTreeMap<String, String>,
    guard: &OriginGuard,
) -> Result<Performed, EnvError> {
    let what = action.label();
    let heal = match action {
        Action::Click { target } => match tab.click(target, &what).await {
            Ok(index) => Heal::of(target, index),
            Err(EnvError::TargetMissing(missing)) => match link_href(target, guard) {
                // A link no locator finds any more (a listing that changed: the issue just
                // resolved is off the list of open ones) sends what its click would: the
                // `GET` of its address, as the page declared it.
                Some(url) => {
                    tab.navigate(url).await?;
                    Some(Heal {
                        index: target.locators.len() as u32,
                        locator: format!("href {url}"),
                    })
                }
                None => return Err(EnvError::TargetMissing(missing)),
            },
            Err(error) => return Err(error),
        },
        Action::Fill {
            target,
            value,
            enter,
        } => {
            let text = input_value(inputs, value)?;
            let used = tab.fill(target, &what, &text).await?;
            if *enter {
                tab.press("Enter").await?;
            }
            Heal::of(target, used)
        }
        Action::FillForm { fields, submit } => {
            let mut heal = None;
            for field in fields {
                let text = input_value(inputs, &field.value)?;
                let what = format!("field {:?}", field.target.name);
                let index = if field.select {
                    tab.select(&field.target, &what, &text).await?
                } else {
                    // A form is filled as a person fills it: where a field suggests values
                    // (an autocomplete), the one that holds the text typed is taken.
                    tab.fill_choosing(&field.target, &what, &text).await?
                };
                heal = Heal::deeper(heal, Heal::of(&field.target, index));
            }
            match submit {
                Some(target) => {
                    let index = tab.click(target, &what).await?;
                    Heal::deeper(heal, Heal::of(target, index))
                }
                None => {
                    tab.press("Enter").await?;
                    heal
                }
            }
        }
        Action::Select { target, option } => {
            Heal::of(target, tab.select(target, &what, option).await?)
        }
        Action::Check { targets } => {
            let mut heal = None;
            for target in targets {
                let what = format!("choice {:?}", target.name);
                let index = tab.click(target, &what).await?;
                heal = Heal::deeper(heal, Heal::of(target, index));
            }
            heal
        }
        Action::Scroll { target, to } => Heal::of(target, tab.scroll(target, &what, *to).await?),
        Action::Repeat { target, times } => {
            let mut heal = None;
            for _ in 0..(*times).min(forager_protocol::workflow::MAX_REPEAT) {
                heal = Heal::deeper(heal, Heal::of(target, tab.click(target, &what).await?));
                // Each click acts on what the last one left (a calendar redrawn).
                tab.settle().await?;
            }
            heal
        }
        Action::Hover { target } => Heal::of(target, tab.hover(target, &what).await?),
        Action::Slide { moves } => {
            let mut heal = None;
            for m in moves {
                let what = format!("slider {:?}", m.target.name);
                let index = tab.slide(&m.target, &what, &m.value).await?;
                heal = Heal::deeper(heal, Heal::of(&m.target, index));
            }
            heal
        }
        Action::Press { key } => {
            tab.press(key).await?;
            None
        }
        Action::Navigate { url } => {
            if !guard.allows(url) {
                return Err(EnvError::NavigationBlocked(format!(
                    "{url} is outside the task's origins"
                )));
            }
            tab.navigate(url).await?;
            None
        }
        Action::Back => {
            tab.back().await?;
            None
        }
        Action::Done => None,
    };
    let new_document = tab.settle().await?;
    Ok(Performed { heal, new_document })
}

/// The address a link's click loads, where the page declared one within the task's origins:
/// a link's `GET` is the same request whether its element is found or not.
fn link_href<'a>(target: &'a Target, guard: &OriginGuard) -> Option<&'a str> {
    match &target.sends {
        forager_protocol::action::Sends::Get { url }
            if target.role == "link" && guard.allows(url) =>
        {
            Some(url.as_str())
        }
        _ => None,
    }
}

/// A task's success predicates, compiled once.
pub(crate) struct Predicates {
    urls: Vec<regex::Regex>,
    /// Texts that must be on the page (the validator's pre-pass looks for them too).
    pub(crate) texts: Vec<String>,
    selectors: Vec<String>,
    scripts: Vec<String>,
    extractions: Vec<String>,
}

impl Predicates {
    /// The success predicates of a (validated) task.
    pub(crate) fn of(task: &TaskSpec) -> Result<Predicates, EnvError> {
        Predicates::compile(&task.success)
    }

    /// The failure predicates of a (validated) task.
    pub(crate) fn failures_of(task: &TaskSpec) -> Result<Predicates, EnvError> {
        Predicates::compile(&task.failure)
    }

    fn is_empty(&self) -> bool {
        self.urls.is_empty()
            && self.texts.is_empty()
            && self.selectors.is_empty()
            && self.scripts.is_empty()
            && self.extractions.is_empty()
    }

    fn compile(predicates: &[SuccessPredicate]) -> Result<Predicates, EnvError> {
        let mut p = Predicates {
            urls: Vec::new(),
            texts: Vec::new(),
            selectors: Vec::new(),
            scripts: Vec::new(),
            extractions: Vec::new(),
        };
        for predicate in predicates {
            match predicate {
                SuccessPredicate::UrlMatches(re) => p.urls.push(
                    regex::RegexBuilder::new(re)
                        .size_limit(1 << 20)
                        .build()
                        .map_err(|e| EnvError::Other(format!("bad URL regex: {e}")))?,
                ),
                SuccessPredicate::TextPresent(t) => p.texts.push(t.clone()),
                SuccessPredicate::SelectorPresent(s) => p.selectors.push(s.clone()),
                SuccessPredicate::JavaScript(s) => p.scripts.push(s.clone()),
                SuccessPredicate::Extraction(s) => p.extractions.push(s.clone()),
            }
        }
        Ok(p)
    }

    /// Whether every predicate holds on the page `observation` was taken of. A script that
    /// throws is a predicate that does not hold.
    pub(crate) async fn hold(
        &self,
        tab: &Tab,
        observation: &Observation,
    ) -> Result<bool, EnvError> {
        if !self.urls.iter().all(|re| re.is_match(&observation.url)) {
            return Ok(false);
        }
        if !self.texts.is_empty() || !self.selectors.is_empty() {
            let (texts, selectors) = tab.check_dom(&self.texts, &self.selectors).await?;
            if !texts.iter().all(|&b| b) || !selectors.iter().all(|&b| b) {
                return Ok(false);
            }
        }
        for script in &self.scripts {
            match tab.evaluate(script.clone(), false).await {
                Ok(serde_json::Value::Bool(true)) => {}
                Ok(_) | Err(EnvError::Other(_)) => return Ok(false),
                Err(other) => return Err(other),
            }
        }
        for script in &self.extractions {
            match tab.evaluate(script.clone(), false).await {
                Ok(value) if is_meaningful(&value) => {}
                Ok(_) | Err(EnvError::Other(_)) => return Ok(false),
                Err(other) => return Err(other),
            }
        }
        Ok(true)
    }

    /// Whether any predicate holds (failure predicates: one is enough). A script that throws
    /// does not hold.
    pub(crate) async fn any_holds(
        &self,
        tab: &Tab,
        observation: &Observation,
    ) -> Result<bool, EnvError> {
        if self.is_empty() {
            return Ok(false);
        }
        if self.urls.iter().any(|re| re.is_match(&observation.url)) {
            return Ok(true);
        }
        if !self.texts.is_empty() || !self.selectors.is_empty() {
            let (texts, selectors) = tab.check_dom(&self.texts, &self.selectors).await?;
            if texts.iter().chain(&selectors).any(|&b| b) {
                return Ok(true);
            }
        }
        for script in &self.scripts {
            match tab.evaluate(script.clone(), false).await {
                Ok(serde_json::Value::Bool(true)) => return Ok(true),
                Ok(_) | Err(EnvError::Other(_)) => {}
                Err(other) => return Err(other),
            }
        }
        for script in &self.extractions {
            match tab.evaluate(script.clone(), false).await {
                Ok(value) if is_meaningful(&value) => return Ok(true),
                Ok(_) | Err(EnvError::Other(_)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::action::Sends;

    fn target(role: &str, sends: Sends) -> Target {
        Target {
            locators: vec![],
            role: role.into(),
            name: "Typo in the installation guide".into(),
            sends,
        }
    }

    #[test]
    fn a_missing_link_is_followed_by_its_address_within_the_origins_only() {
        let guard = OriginGuard::new(["http://127.0.0.1:1/tracker/"]);
        let get = |url: &str| Sends::Get { url: url.into() };
        assert_eq!(
            link_href(
                &target("link", get("http://127.0.0.1:1/tracker/issue2")),
                &guard
            ),
            Some("http://127.0.0.1:1/tracker/issue2")
        );
        assert_eq!(
            link_href(&target("link", get("http://127.0.0.2:1/x")), &guard),
            None
        );
        // A GET form's address lacks the values it appends: no equivalent of its button.
        assert_eq!(
            link_href(
                &target("button", get("http://127.0.0.1:1/tracker/issue")),
                &guard
            ),
            None
        );
        let post = Sends::Post {
            url: "http://127.0.0.1:1/tracker/issue2".into(),
        };
        assert_eq!(link_href(&target("link", post), &guard), None);
    }
}
