//! Shortcuts: a success that left the start page and then used a control the start page
//! offers too is tried again without its detour before it is published.
//!
//! A search keeps whatever path reached the success first: on Roundup, "Log in as alice" went
//! through "Lost your login?" because the login form is on that page too. Published, the
//! detour becomes the workflow every later task replays, and its way in (a shared prefix)
//! leaves those searches on the password-reminder page. The queen finds such a detour from
//! what it already knows (the start page's actions are its branches, the finder said which
//! page each step reached), and tries the shorter path as one more branch, replayed like a
//! remembered workflow. Nothing is trusted: the shorter path is published only when a node
//! reaches the success by it and a second node reproduces it, like any other success.
//!
//! Only a path that may be executed again whole (no write a site must not see twice) gets one. The
//! shortcut branch is assigned at once beside the reproduction, and the longer success is held
//! until it answers.

use forager_protocol::risk::RiskClass;
use forager_protocol::wire::{FoundPath, WireCandidate};
use forager_protocol::{Action, TaskSpec};

/// The shorter path of a success whose first steps were clicks that each reached another
/// page and which then used a control the start page offers (`start`: the start page's
/// candidates): that control, in the start page's own version, and the steps after it, each
/// with its risk class. The latest such control gives the shortest path. `None` when the
/// path has no such detour, or when it may not be executed again as a whole (a write the
/// site must not see twice).
pub fn shortcut_of(
    task: &TaskSpec,
    path: &FoundPath,
    start: &[&WireCandidate],
) -> Option<Vec<(Action, RiskClass)>> {
    let steps = path.actions.len();
    if steps < 2 || path.reproducible_steps(task) < steps {
        return None;
    }
    // How many leading steps are clicks to another page (a detour, not a choice on a page).
    let mut before = without_fragment(&task.start_url);
    let mut detour = 0;
    for (i, action) in path.actions.iter().enumerate().take(steps - 1) {
        let Some(seen) = path.seen.get(i) else {
            break;
        };
        let reached = without_fragment(&seen.url);
        let read_only = path
            .risks
            .get(i)
            .is_some_and(|r| *r <= RiskClass::AuthenticatedRead);
        if !matches!(action, Action::Click { .. })
            || !read_only
            || reached.is_empty()
            || reached == before
        {
            break;
        }
        before = reached;
        detour = i + 1;
    }
    (1..=detour).rev().find_map(|j| {
        let label = path.actions[j].label();
        let own = start.iter().find(|c| c.action.label() == label)?;
        let rest = (j + 1..steps).map(|i| {
            let risk = path.risks.get(i).copied().unwrap_or(RiskClass::ReadOnly);
            (path.actions[i].clone(), risk)
        });
        Some(
            std::iter::once((own.action.clone(), own.risk))
                .chain(rest)
                .collect(),
        )
    })
}

fn without_fragment(url: &str) -> &str {
    url.split('#').next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::Fingerprint;
    use forager_protocol::action::{FieldValue, FillValue, Locator, Target};
    use forager_protocol::wire::StepSeen;

    fn target(role: &str, name: &str, css: &str) -> Target {
        Target {
            locators: vec![Locator::Css(css.into())],
            role: role.into(),
            name: name.into(),
            sends: Default::default(),
        }
    }

    fn click(name: &str) -> Action {
        Action::Click {
            target: target("link", name, "a"),
        }
    }

    /// The login form, as one page or another places it (`css`: its locator there).
    fn login(css: &str) -> Action {
        Action::FillForm {
            fields: vec![FieldValue {
                target: target("textbox", "__login_name", css),
                value: FillValue::Input("username".into()),
                select: false,
            }],
            submit: Some(target("button", "Login", "form > input")),
        }
    }

    fn candidate(action: &Action) -> WireCandidate {
        WireCandidate {
            action: action.clone(),
            prior: 0.5,
            risk: RiskClass::AuthenticatedRead,
            key: 0,
            target: None,
        }
    }

    fn actions(shortcut: Option<Vec<(Action, RiskClass)>>) -> Option<Vec<Action>> {
        shortcut.map(|steps| steps.into_iter().map(|(a, _)| a).collect())
    }

    fn path(steps: &[(Action, &str, RiskClass)]) -> FoundPath {
        let mut path = FoundPath::new(
            steps.iter().map(|(a, _, _)| a.clone()).collect(),
            vec![Fingerprint([0; 16]); steps.len()],
            steps.iter().map(|(_, _, r)| *r).collect(),
        );
        path.seen = steps
            .iter()
            .map(|(_, url, _)| StepSeen {
                family: None,
                heading: None,
                url: (*url).into(),
                title: String::new(),
                page_digest: None,
                screenshot: None,
                why: None,
            })
            .collect();
        path
    }

    fn task() -> TaskSpec {
        TaskSpec::new("http://127.0.0.1:1/tracker/", "Log in as alice", Vec::new())
    }

    #[test]
    fn a_detour_to_another_page_is_cut_at_the_start_page_s_own_control() {
        let start_login = login("body > form");
        let found = path(&[
            (
                click("Lost your login?"),
                "http://127.0.0.1:1/tracker/user?@template=forgotten",
                RiskClass::AuthenticatedRead,
            ),
            (
                login("div > form"),
                "http://127.0.0.1:1/tracker/user?welcome",
                RiskClass::AuthenticatedRead,
            ),
            (
                click("Your Issues"),
                "http://127.0.0.1:1/tracker/issue",
                RiskClass::ReadOnly,
            ),
        ]);
        let (other, own) = (candidate(&click("Create New")), candidate(&start_login));
        let shorter = actions(shortcut_of(&task(), &found, &[&other, &own]));
        // The start page's own form (its locators), then the rest of the path.
        assert_eq!(shorter, Some(vec![start_login, click("Your Issues")]));
    }

    #[test]
    fn no_shortcut_without_a_detour_to_another_page() {
        let found = path(&[
            // A click that stayed on the start page (a tab, a checkbox) is a choice made there.
            (
                click("Advanced"),
                "http://127.0.0.1:1/tracker/#advanced",
                RiskClass::ReadOnly,
            ),
            (
                login("div > form"),
                "http://127.0.0.1:1/tracker/?welcome",
                RiskClass::ReadOnly,
            ),
        ]);
        assert_eq!(
            shortcut_of(&task(), &found, &[&candidate(&login("body > form"))]),
            None
        );
        // A path that never uses a start page's control again.
        let found = path(&[
            (
                click("Lost your login?"),
                "http://127.0.0.1:1/forgotten",
                RiskClass::ReadOnly,
            ),
            (
                click("Send"),
                "http://127.0.0.1:1/sent",
                RiskClass::ReadOnly,
            ),
        ]);
        assert_eq!(
            shortcut_of(&task(), &found, &[&candidate(&login("body > form"))]),
            None
        );
        // Nothing said of the pages: nothing known of a detour.
        let mut bare = path(&[
            (
                click("Lost your login?"),
                "http://127.0.0.1:1/forgotten",
                RiskClass::ReadOnly,
            ),
            (
                login("div > form"),
                "http://127.0.0.1:1/?welcome",
                RiskClass::ReadOnly,
            ),
        ]);
        bare.seen.clear();
        assert_eq!(
            shortcut_of(&task(), &bare, &[&candidate(&login("body > form"))]),
            None
        );
    }

    #[test]
    fn a_path_with_a_write_the_site_must_not_see_twice_is_not_tried_again() {
        let found = path(&[
            (
                click("Lost your login?"),
                "http://127.0.0.1:1/forgotten",
                RiskClass::ReadOnly,
            ),
            (
                login("div > form"),
                "http://127.0.0.1:1/?welcome",
                RiskClass::AuthenticatedRead,
            ),
            (
                click("Submit Changes"),
                "http://127.0.0.1:1/issue1?ok",
                RiskClass::ExternalSubmission,
            ),
        ]);
        assert_eq!(
            shortcut_of(&task(), &found, &[&candidate(&login("body > form"))]),
            None
        );
        // Where the site replays writes (a test fixture), it is.
        let mut replays = task();
        replays.resettable = true;
        assert!(shortcut_of(&replays, &found, &[&candidate(&login("body > form"))]).is_some());
    }
}
