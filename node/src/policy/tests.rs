//! The default policy's proposals and priors on pages built by hand.

use super::*;
use forager_protocol::Locator;
use forager_protocol::observation::{FormContext, PageValue};

mod choices;

fn element(role: &str, name: &str) -> Element {
    let mut element = crate::testing::control(role, name, "");
    element.tag = "a".into();
    element.locators = vec![Locator::Text(name.into())];
    element
}

pub(super) fn page(elements: Vec<Element>) -> Observation {
    crate::testing::page("http://127.0.0.1:1/", elements)
}

/// The labels of the form fills the default policy proposes for a page and a goal.
fn form_fills(observation: &Observation, goal: &str) -> Vec<String> {
    form_fills_weighted(observation, goal, "")
}

/// [`form_fills`] with signal weights (`name=weight,…`).
fn form_fills_weighted(observation: &Observation, goal: &str, weights: &str) -> Vec<String> {
    let weights = signals::Weights::parse(weights).expect("weights of known signals");
    DefaultPolicy::default()
        .with_weights(weights)
        .propose(observation, &task(goal, &[]))
        .candidates
        .iter()
        .filter(|c| matches!(c.action, Action::FillForm { .. }))
        .map(|c| c.action.label())
        .collect()
}

pub(super) fn task(goal: &str, inputs: &[(&str, &str)]) -> TaskContext {
    TaskContext {
        area: None,
        goal: goal.into(),
        inputs: inputs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        allowed_origins: vec!["http://127.0.0.1:1".into()],
    }
}

#[test]
fn the_goals_names_pick_the_row_and_value_the_page_that_shows_them() {
    let goal = "Find the email by Wilhelmina and forward that email to Malva.";
    let reading = GoalReading::of(goal);
    let rows = ["Wilhelmina Leo placerat", "Marlena Dolor suspendis"];
    assert!(signals::names_goal(
        &element("clickable", rows[0]),
        &reading
    ));
    assert!(!signals::names_goal(
        &element("clickable", rows[1]),
        &reading
    ));
    assert!(!signals::names_goal(
        &element("button", "Wilhelminas"),
        &reading
    ));

    // The inbox: her name is on a row to pick, and the page prints the goal itself.
    let mut inbox = page(rows.iter().map(|r| element("clickable", r)).collect());
    inbox.text_excerpt = format!("{goal} {} {}", rows[0], rows[1]);
    // Her email open: her name is content; another's: it is nowhere.
    let open = |sender: &str| open_email(goal, sender);
    let names = |o: &Observation| goal_progress(o, &reading, goal).names;
    assert_eq!(names(&inbox), Some(0.0));
    assert_eq!(names(&open("Wilhelmina")), Some(0.5));
    assert_eq!(names(&open("Marlena")), Some(0.0));
    let policy = DefaultPolicy::default();
    let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
    assert!(value(&open("Wilhelmina")) > value(&open("Marlena")));
    assert!(value(&open("Wilhelmina")) > value(&inbox));
}

/// An email open on a page that prints the goal: its sender, its text, Reply and Forward.
fn open_email(goal: &str, sender: &str) -> Observation {
    let mut email = page(vec![
        element("button", "Reply"),
        element("button", "Forward"),
    ]);
    email.text_excerpt = format!("{goal} {sender} Leo placerat. Reply Forward");
    email
}

#[test]
fn a_possessive_names_whose_email_to_open_and_the_other_name_is_the_recipient() {
    // MiniWoB++'s email-inbox-forward-nl-turk, seed 2: before, "Lucie's" was no name,
    // Katee's own email scored as progress and the search spent its budget there.
    let goal = "Lucie's email, will you forward that to Katee?";
    let reading = GoalReading::of(goal);
    let rows = [
        "Lucie Ligula. Ligula in aliqu..",
        "Katee Elementum et. Purus..",
    ];
    assert!(signals::names_goal(
        &element("clickable", rows[0]),
        &reading
    ));
    let open = |sender: &str| open_email(goal, sender);
    let policy = DefaultPolicy::default();
    let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
    assert!(value(&open("Lucie")) > value(&open("Katee")));
}

#[test]
fn someones_email_for_someone_else_is_forwarded_whatever_the_verb() {
    // email-inbox-forward-nl-turk, seeds 1 and 6: "give" and "send" are no "Forward",
    // and the search spent its budget on replies to the sender.
    let policy = DefaultPolicy::default();
    for goal in [
        "I command you to give Etheline the email from Doria.",
        "Send Joella the email from Chrystal.",
    ] {
        let mut email = open_email(goal, "Doria");
        email.elements.push(element("button", "close email"));
        assert_eq!(
            best(&policy.propose(&email, &task(goal, &[]))),
            "click \"Forward\"",
            "{goal}"
        );
    }
    // A reply stays a reply.
    let goal = "Reply to Joyan's email with, \"Vestibulum.\".";
    assert_eq!(
        best(&policy.propose(&open_email(goal, "Joyan"), &task(goal, &[]))),
        "click \"Reply\""
    );
}

/// The label of the proposal with the highest prior.
fn best(proposals: &Proposals) -> String {
    proposals
        .candidates
        .iter()
        .max_by(|a, b| a.prior.total_cmp(&b.prior))
        .map(|c| c.action.label())
        .unwrap_or_default()
}

/// An email's reply or forward form: a one-line "to" and a message body, no button the
/// policy reads as the form's submit; the page's values are what the fields hold.
fn compose_form(to: &str, body: &str) -> Observation {
    let implicit = FormContext {
        name: "area".into(),
        submit_name: None,
        posts: false,
        selector: "#area".into(),
        implicit: true,
    };
    let recipient = one_line_field("to", &implicit);
    let mut message = element("textbox", "");
    message.tag = "textarea".into();
    message.locators = vec![Locator::Css("#message".into())];
    message.form = Some(implicit);
    let mut form = page(vec![recipient, message, element("clickable", "send")]);
    form.values = [("to", to), ("", body)]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(label, value)| PageValue {
            changed: false,
            label: label.into(),
            value: value.into(),
            kind: PageValueKind::Field,
        })
        .collect();
    form
}

/// An `<input type=text>` named `name` in `form`.
fn one_line_field(name: &str, form: &FormContext) -> Element {
    let mut field = element("textbox", name);
    field.tag = "input".into();
    field.input_type = "text".into();
    field.form = Some(form.clone());
    field
}

/// A "Tags" field with a Submit button, holding `held`.
fn tags_form(held: &str) -> Observation {
    let form = FormContext {
        name: "form".into(),
        submit_name: Some("Submit".into()),
        posts: false,
        selector: "#form".into(),
        implicit: true,
    };
    let tags = one_line_field("Tags:", &form);
    let mut submit = element("button", "Submit");
    submit.tag = "button".into();
    submit.form = Some(form);
    let mut observation = page(vec![tags, submit]);
    if !held.is_empty() {
        observation.values = vec![PageValue {
            changed: false,
            label: "Tags:".into(),
            value: held.into(),
            kind: PageValueKind::Field,
        }];
    }
    observation
}

/// A flight search: "From:", "To:" and an unnamed date field, holding `held` (label,
/// value).
fn flight_form(held: &[(&str, &str)]) -> Observation {
    let form = FormContext {
        name: "form".into(),
        submit_name: Some("Search".into()),
        posts: false,
        selector: "#form".into(),
        implicit: true,
    };
    let mut search = element("button", "Search");
    search.tag = "button".into();
    search.form = Some(form.clone());
    let mut observation = page(vec![
        one_line_field("From:", &form),
        one_line_field("To:", &form),
        one_line_field("", &form),
        search,
    ]);
    observation.values = held
        .iter()
        .map(|(label, value)| PageValue {
            changed: false,
            label: (*label).into(),
            value: (*value).into(),
            kind: PageValueKind::Field,
        })
        .collect();
    observation
}

#[test]
fn a_date_field_that_takes_no_typing_is_clicked_not_filled() {
    let goal = "Book the shortest one-way flight from: LIH to: West Palm Beach, FL on 11/25/2016.";
    let with_picker = |held: &[(&str, &str)]| {
        let mut observation = flight_form(held);
        observation.elements[2].readonly = true;
        observation
    };
    let observation = with_picker(&[]);
    let proposals = DefaultPolicy::default().propose(&observation, &task(goal, &[]));
    let date_field = target_of(&observation.elements[2]);
    // No fill types into it, alone or in the form; the form is filled without it.
    assert!(
        proposals
            .candidates
            .iter()
            .all(|c| !c.action.targets()[..].contains(&&date_field)
                || matches!(c.action, Action::Click { .. })),
        "{proposals:?}"
    );
    assert!(proposals.candidates.iter().any(|c| matches!(
        &c.action,
        Action::FillForm { fields, .. } if fields.len() == 2
    )));
    // Clicking it (its calendar opens) ranks with the best while the goal's date is to do.
    let click_prior = |proposals: &Proposals| {
        proposals
            .candidates
            .iter()
            .find(|c| matches!(&c.action, Action::Click { target } if *target == date_field))
            .map(|c| c.prior)
            .expect("a click on the date field")
    };
    let best = proposals
        .candidates
        .iter()
        .map(|c| c.prior)
        .fold(0.0, f64::max);
    assert!(click_prior(&proposals) >= 0.5 * best, "{proposals:?}");
    // The date still all to do: no value for it, however the rest looks.
    let reading = GoalReading::of(goal);
    assert_eq!(date_progress(&observation, &reading), Some(0.0));
    let mut plain = flight_form(&[]);
    plain.elements[2].readonly = false;
    assert_eq!(date_progress(&plain, &reading), None);
    // A field that holds the goal's value in a suggestion chosen for it is not typed
    // into again.
    let held = with_picker(&[("From:", "Kauai Island/Lihue, HI (LIH)")]);
    let proposals = DefaultPolicy::default().propose(&held, &task(goal, &[]));
    let from = target_of(&held.elements[0]);
    assert!(
        !proposals.candidates.iter().any(|c| matches!(
            &c.action,
            Action::Fill { target, value: FillValue::Literal(v), .. } if *target == from && v == "LIH"
        )),
        "{proposals:?}"
    );
}

#[test]
fn values_the_goal_labels_go_into_the_fields_with_those_labels() {
    let goal = "Book the shortest one-way flight from: LIH to: West Palm Beach, FL on 11/25/2016.";
    let reading = GoalReading::of(goal);
    let values = |held: &[(&str, &str)]| goal_progress(&flight_form(held), &reading, goal).values;
    // The suggestions picked hold the labelled values; the date is held by the other field.
    let done = values(&[
        ("From:", "Kauai Island/Lihue, HI (LIH)"),
        ("To:", "West Palm Beach, FL (PBI)"),
        ("", "11/25/2016"),
    ]);
    assert_eq!(done, Some(1.0));
    // A value in the field another value is labelled for is no progress.
    assert_eq!(values(&[("From:", "West Palm Beach, FL")]), Some(0.0));
    assert_eq!(values(&[("From:", "11/25/2016")]), Some(0.0));
    assert_eq!(values(&[("From:", "LIH")]), Some(1.0 / 3.0));
    // Another value in a labelled field is counted as misplaced, and such a page is worth
    // less than the one with the value in its place; the date counts only outside them.
    let progress = |held: &[(&str, &str)]| goal_progress(&flight_form(held), &reading, goal);
    assert_eq!(progress(&[("From:", "West Palm Beach, FL")]).misplaced, 1);
    assert_eq!(progress(&[("From:", "11/25/2016")]).misplaced, 1);
    assert_eq!(
        progress(&[("To:", "West Palm Beach, FL (PBI)")]).misplaced,
        0
    );
    assert_eq!(
        progress(&[("From:", "Kauai Island/Lihue, HI (LIH)")]).misplaced,
        0
    );
    assert_eq!(
        date_progress(&flight_form(&[("From:", "11/25/2016")]), &reading),
        None
    );
    assert_eq!(
        date_progress(&flight_form(&[("", "11/25/2016")]), &reading),
        Some(1.0)
    );
    // Both with the destination's suggestion up, as the page shows it under either field:
    // a promise alike.
    let value = |held: &[(&str, &str)]| {
        let mut page = flight_form(held);
        page.elements
            .push(element("clickable", "West Palm Beach, FL (PBI)"));
        DefaultPolicy::default()
            .propose(&page, &task(goal, &[]))
            .value_hint
    };
    assert!(value(&[("To:", "West Palm Beach, FL")]) > value(&[("From:", "West Palm Beach, FL")]));
    assert!(value(&[("", "11/25/2016")]) > value(&[("From:", "11/25/2016")]));
    // The form's fill puts each labelled value under its label.
    let proposals = DefaultPolicy::default().propose(&flight_form(&[]), &task(goal, &[]));
    let best_form = proposals
        .candidates
        .iter()
        .filter(|c| matches!(c.action, Action::FillForm { .. }))
        .max_by(|a, b| a.prior.total_cmp(&b.prior))
        .map(|c| c.action.label());
    assert_eq!(
        best_form.as_deref(),
        Some(
            "fill \"From:\"=\"LIH\", \"To:\"=\"West Palm Beach, FL\", \"\"=\"11/25/2016\" \
             and click \"Search\""
        )
    );
}

#[test]
fn a_suggestion_that_holds_the_goals_pieces_is_sent() {
    let goal = "Enter an item that starts with \"Lith\" and ends with \"ania\".";
    let reading = GoalReading::of(goal);
    let values = |held: &str| goal_progress(&tags_form(held), &reading, goal).values;
    // Both pieces are in the suggestion picked; a piece typed alone is half.
    assert_eq!(values("Lithuania"), Some(1.0));
    assert_eq!(values("Lith"), Some(0.5));
    assert_eq!(values("Latvia"), Some(0.0));
    let submit_prior = |held: &str| {
        let proposals = DefaultPolicy::default().propose(&tags_form(held), &task(goal, &[]));
        let best = proposals
            .candidates
            .iter()
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .map(|c| c.action.label());
        let submit = proposals
            .candidates
            .iter()
            .find(|c| c.action.label() == "click \"Submit\"")
            .map(|c| c.prior);
        (best, submit)
    };
    // With every piece held, sending the form comes first; with one, typing does.
    let (best, ready) = submit_prior("Lithuania");
    assert_eq!(best.as_deref(), Some("click \"Submit\""));
    let (best, half) = submit_prior("Lith");
    assert_ne!(best.as_deref(), Some("click \"Submit\""));
    assert!(ready > half, "{ready:?} vs {half:?}");
}

#[test]
fn a_forward_types_the_recipient_and_keeps_the_message() {
    let goal = "Send Marlena the email from Caprice.";
    let forward = compose_form("", "Leo placerat. Leo scelerisque.");
    let proposals = DefaultPolicy::default().propose(&forward, &task(goal, &[]));
    let prior = |label: &str| {
        proposals
            .candidates
            .iter()
            .find(|c| c.action.label() == label)
            .map(|c| c.prior)
            .unwrap_or_else(|| panic!("{label} proposed"))
    };
    // The name goes into the empty recipient field before it is typed over the message.
    assert!(
        prior("fill \"to\" with \"Marlena\"") > prior("fill \"\" with \"Marlena\""),
        "the recipient before the message"
    );
    // Enter in a <textarea> is a line break, not a submit: never proposed there, and a
    // form without a button presses it in its one-line field.
    for candidate in &proposals.candidates {
        match &candidate.action {
            Action::Fill { target, enter, .. } => {
                assert!(
                    !(*enter && target.name.is_empty()),
                    "{}",
                    candidate.action.label()
                );
            }
            Action::FillForm {
                fields,
                submit: None,
            } => {
                let last = fields.last().expect("a field");
                assert_eq!(last.target.name, "to", "{}", candidate.action.label());
            }
            _ => {}
        }
    }

    // A reply to the sender with the recipient's name as its message is no more done than
    // the forward with the recipient typed where recipients go.
    let reading = GoalReading::of(goal);
    let names = |o: &Observation| goal_progress(o, &reading, goal).names;
    let forwarded = compose_form("Marlena", "Leo placerat. Leo scelerisque.");
    let replied = compose_form("Caprice", "Marlena");
    assert_eq!(names(&forwarded), Some(0.5));
    assert_eq!(names(&replied), Some(0.5));
}

#[test]
fn a_goal_that_asks_to_scroll_ranks_the_end_it_names_first() {
    let policy = DefaultPolicy::default();
    let mut observation = page(vec![element("button", "Submit")]);
    let scrollable = |at| forager_protocol::observation::Scrollable {
        name: "text area".into(),
        role: "textbox".into(),
        locators: vec![Locator::Css("#text-area".into())],
        at,
    };
    observation.scrollables = vec![scrollable(ScrollPosition::Middle)];
    let scrolls = |proposals: &Proposals| -> Vec<(ScrollEdge, f64)> {
        proposals
            .candidates
            .iter()
            .filter_map(|c| match &c.action {
                Action::Scroll { to, .. } => Some((*to, c.prior)),
                _ => None,
            })
            .collect()
    };
    let submit_prior = |proposals: &Proposals| {
        proposals
            .candidates
            .iter()
            .find(|c| matches!(c.action, Action::Click { .. }))
            .map(|c| c.prior)
            .expect("the button")
    };
    let asked = policy.propose(
        &observation,
        &task(
            "Scroll the textarea to the top of the text hit submit.",
            &[],
        ),
    );
    let asked = scrolls(&asked);
    assert_eq!(asked.len(), 2, "both ends: {asked:?}");
    let prior = |to| {
        asked
            .iter()
            .find(|(t, _)| *t == to)
            .map(|(_, p)| *p)
            .unwrap_or(0.0)
    };
    assert!(
        prior(ScrollEdge::Top) > 2.0 * prior(ScrollEdge::Bottom),
        "{asked:?}"
    );
    // Not asked: the end is a long shot below the page's controls.
    let plain = policy.propose(&observation, &task("Press Submit", &[]));
    let bottom = scrolls(&plain)
        .into_iter()
        .find(|(t, _)| *t == ScrollEdge::Bottom)
        .map(|(_, p)| p)
        .expect("offered");
    assert!(bottom < submit_prior(&plain), "{bottom}");
    // A box at its end is not scrolled there again; its keys differ by end.
    observation.scrollables = vec![scrollable(ScrollPosition::Bottom)];
    let at_end = policy.propose(&observation, &task("Scroll to the bottom", &[]));
    assert_eq!(
        scrolls(&at_end).iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        vec![ScrollEdge::Top]
    );
}

#[test]
fn leaving_the_session_the_theme_or_the_area_is_tried_last() {
    let link = |name: &str, href: &str| {
        let mut e = element("link", name);
        e.href = Some(href.into());
        e
    };
    let mut observation = page(vec![
        link("Groups", "http://127.0.0.1:1/admin/auth/group/"),
        link("Log out", "http://127.0.0.1:1/admin/logout/"),
        element("button", "Toggle theme (current theme: auto)"),
        link("View site", "http://127.0.0.1:1/"),
        link("Skip to main content", "http://127.0.0.1:1/admin/#content"),
        link("Site administration", "http://127.0.0.1:1/admin/"),
    ]);
    observation.url = "http://127.0.0.1:1/admin/".into();
    let prior = |goal: &str, name: &str| {
        let mut context = task(goal, &[]);
        context.area = Area::of("http://127.0.0.1:1/admin/");
        DefaultPolicy::default()
            .propose(&observation, &context)
            .candidates
            .iter()
            .find(|c| c.action.target().is_some_and(|t| t.name == name))
            .map(|c| c.prior)
            .expect("proposed")
    };
    let goal = "add a group for the site's editors";
    for name in [
        "Log out",
        "Toggle theme (current theme: auto)",
        "View site",
        "Skip to main content",
        "Site administration",
    ] {
        assert!(prior(goal, name) < prior(goal, "Groups"), "{name}");
    }
    // Unless the goal asks for it.
    assert!(prior("log out of the site", "Log out") > prior("log out of the site", "Groups"));
    assert!(ends_session("LOG OUT") && ends_session("Sign out") && !ends_session("Logo"));
    assert_eq!(
        Area::of("http://127.0.0.1:1/admin/index.html").map(|a| a.path),
        Some("/admin/".into())
    );
}

#[test]
fn credentials_go_only_where_credentials_are_asked_for() {
    let field = |name: &str, kind: &str| {
        let mut e = element("textbox", name);
        e.tag = "input".into();
        e.input_type = kind.into();
        e.form = Some(forager_protocol::observation::FormContext {
            name: "group_form".into(),
            submit_name: Some("Save".into()),
            posts: true,
            selector: "#group_form".into(),
            implicit: false,
        });
        e
    };
    let mut save = element("button", "Save");
    save.form = field("x", "text").form;
    let observation = page(vec![field("Name:", "text"), field("Filter", "text"), save]);
    let goal = "log in and add a new group named \"editors\"";
    let proposals = DefaultPolicy::default().propose(
        &observation,
        &task(goal, &[("username", "admin"), ("password", "secret")]),
    );
    let forms: Vec<&Action> = proposals
        .candidates
        .iter()
        .map(|c| &c.action)
        .filter(|a| matches!(a, Action::FillForm { .. }))
        .collect();
    assert!(!forms.is_empty());
    for form in forms {
        let Action::FillForm { fields, .. } = form else {
            unreachable!()
        };
        for f in fields {
            if f.target.name == "Name:" {
                assert_eq!(f.value, FillValue::Literal("editors".into()), "{form:?}");
            }
            assert_ne!(f.value, FillValue::Input("password".into()), "{form:?}");
        }
    }
}

/// The tracker's page: a "Show issue" number field in a GET form beside the login form.
#[test]
fn credentials_never_go_into_a_get_form_beside_the_login_form() {
    use forager_protocol::Sends;
    let in_form = |name: &str, kind: &str, form: &str, posts: bool| {
        let mut e = element("textbox", name);
        e.tag = "input".into();
        e.input_type = kind.into();
        e.form = Some(forager_protocol::observation::FormContext {
            name: form.into(),
            submit_name: Some(if posts { "Login" } else { "show" }.into()),
            posts,
            selector: format!("#{form}"),
            implicit: false,
        });
        let url = format!("http://127.0.0.1:1/{form}");
        e.sends = if posts {
            Sends::Post { url }
        } else {
            Sends::Get { url }
        };
        e
    };
    let mut show = element("button", "show");
    show.form = in_form("x", "text", "issue", false).form;
    show.sends = in_form("x", "text", "issue", false).sends;
    let mut login = element("button", "Login");
    login.form = in_form("x", "text", "login", true).form;
    login.sends = in_form("x", "text", "login", true).sends;
    let observation = page(vec![
        in_form("Show issue:", "number", "issue", false),
        in_form("Search", "search", "issue", false),
        show,
        in_form("Username", "text", "login", true),
        in_form("Password", "password", "login", true),
        login,
    ]);
    let goal = "Log in as alice and report a new bug titled \"Crash on save\"";
    let proposals = DefaultPolicy::default().propose(
        &observation,
        &task(goal, &[("username", "alice"), ("password", "wonderland")]),
    );
    let mut credentials_typed = 0;
    for candidate in &proposals.candidates {
        let fields: Vec<&FieldValue> = match &candidate.action {
            Action::FillForm { fields, .. } => fields.iter().collect(),
            _ => Vec::new(),
        };
        for f in fields {
            if let FillValue::Input(name) = &f.value {
                credentials_typed += 1;
                match name.as_str() {
                    "password" => assert_eq!(f.target.name, "Password", "{candidate:?}"),
                    "username" => assert_eq!(f.target.name, "Username", "{candidate:?}"),
                    other => panic!("unexpected input {other}"),
                }
            }
        }
        if let Action::Fill {
            value: FillValue::Input(name),
            target,
            ..
        } = &candidate.action
        {
            panic!("{name} typed alone into {:?}", target.name);
        }
    }
    assert!(credentials_typed >= 2, "the login form is still filled");
}

/// A data browser's table: a search box and a filter row's value in one GET form, a goal
/// that quotes nothing. The goal's telling word goes into the search box.
#[test]
fn spare_words_go_into_a_forms_search_box_when_nothing_fits() {
    let field = |name: &str, role: &str, kind: &str| {
        let mut e = element(role, name);
        e.tag = "input".into();
        e.input_type = kind.into();
        e.form = Some(forager_protocol::observation::FormContext {
            name: "table".into(),
            submit_name: Some("Apply".into()),
            posts: false,
            selector: "#table".into(),
            implicit: false,
        });
        e
    };
    let mut apply = element("button", "Apply");
    apply.form = field("x", "textbox", "text").form;
    let observation = page(vec![
        field("Search:", "searchbox", "search"),
        field("_filter_value", "textbox", "text"),
        apply,
    ]);
    let proposals = DefaultPolicy::default().propose(
        &observation,
        &task("Find the cities whose description mentions a harbour", &[]),
    );
    let searched: Vec<String> = proposals
        .candidates
        .iter()
        .filter_map(|c| match &c.action {
            Action::FillForm { fields, .. } => fields
                .iter()
                .find(|f| f.target.name == "Search:")
                .and_then(|f| match &f.value {
                    FillValue::Literal(text) => Some(text.clone()),
                    FillValue::Input(_) => None,
                }),
            _ => None,
        })
        .collect();
    assert!(searched.iter().any(|w| w == "harbour"), "{searched:?}");
}

#[test]
fn session_ending_controls_are_known_by_name_and_by_url() {
    assert!(would_end_session("Log out", None));
    assert!(would_end_session("Switch user", None));
    assert!(would_end_session("Delete my account", None));
    assert!(would_end_session("Revoke all sessions", None));
    assert!(would_end_session(
        "Bye",
        Some("http://h/issue?@action=logout")
    ));
    assert!(!would_end_session("Log in", None));
    assert!(!would_end_session(
        "Issues",
        Some("http://h/issue?@sort=id")
    ));
    assert!(goal_ends_session("log out of the admin"));
    assert!(!goal_ends_session("add a new group named \"reviewers\""));
}

#[test]
fn goal_like_links_get_higher_priors_and_foreign_links_none() {
    let mut foreign = element("link", "Free laptops here");
    foreign.href = Some("http://127.0.0.2:1/steal".into());
    let mut laptops = element("link", "Laptops");
    laptops.href = Some("http://127.0.0.1:1/laptops".into());
    let mut garden = element("link", "Garden tools");
    garden.href = Some("http://127.0.0.1:1/garden".into());
    let proposals = DefaultPolicy::default().propose(
        &page(vec![foreign, laptops, garden]),
        &task("buy a laptop", &[]),
    );
    assert_eq!(
        proposals.candidates.len(),
        2,
        "the foreign link is not proposed"
    );
    let prior = |name: &str| {
        proposals
            .candidates
            .iter()
            .find(|c| c.action.target().is_some_and(|t| t.name == name))
            .map(|c| c.prior)
            .expect("proposed")
    };
    assert!(prior("Laptops") > prior("Garden tools"));
    let sum: f64 = proposals.candidates.iter().map(|c| c.prior).sum();
    assert!((sum - 1.0).abs() < 1e-9);
    assert!(proposals.candidates.iter().all(|c| c.target.is_some()));
}

#[test]
fn forms_are_filled_whole_with_matching_inputs_and_classified() {
    let form = FormContext {
        name: "login".into(),
        submit_name: Some("Log in".into()),
        posts: true,
        selector: "#login".into(),
        implicit: false,
    };
    let mut email = element("textbox", "Email address");
    email.input_type = "email".into();
    email.form = Some(form.clone());
    let mut password = element("textbox", "Password");
    password.input_type = "password".into();
    password.form = Some(form.clone());
    let mut submit = element("button", "Log in");
    submit.form = Some(form);
    let proposals = DefaultPolicy::default().propose(
        &page(vec![email, password, submit]),
        &task(
            "sign in",
            &[("password", "hunter2"), ("email", "a@b.example")],
        ),
    );
    let fill = proposals
        .candidates
        .iter()
        .find(|c| matches!(c.action, Action::FillForm { .. }))
        .expect("a form fill");
    let Action::FillForm { fields, submit } = &fill.action else {
        unreachable!()
    };
    assert_eq!(submit.as_ref().map(|s| s.name.as_str()), Some("Log in"));
    let pairs: Vec<(&str, &FillValue)> = fields
        .iter()
        .map(|f| (f.target.name.as_str(), &f.value))
        .collect();
    assert_eq!(
        pairs,
        [
            ("Email address", &FillValue::Input("email".into())),
            ("Password", &FillValue::Input("password".into()))
        ]
    );
    assert_eq!(fill.risk, RiskClass::AuthenticatedRead);
    // Inputs stay references: no secret in the action.
    assert!(!fill.action.label().contains("hunter2"));
}

#[test]
fn quoted_strings_become_values() {
    let t = task("search for \u{201c}ThinkPad X1\u{201d} and 'blue'", &[]);
    assert_eq!(t.quoted_strings(), ["ThinkPad X1", "blue"]);
    let mut search = element("searchbox", "Search");
    search.form = Some(FormContext {
        name: "search".into(),
        submit_name: None,
        posts: false,
        selector: "#s".into(),
        implicit: false,
    });
    let proposals = DefaultPolicy::default().propose(&page(vec![search]), &t);
    let typed: Vec<String> = proposals
        .candidates
        .iter()
        .filter(|c| matches!(c.action, Action::FillForm { .. }))
        .map(|c| c.action.label())
        .collect();
    assert_eq!(typed.len(), 2, "{typed:?}");
    assert!(
        typed[0].contains("ThinkPad X1") && typed[1].contains("blue"),
        "{typed:?}"
    );
    assert!(
        proposals
            .candidates
            .iter()
            .all(|c| c.risk == RiskClass::ReadOnly)
    );
}

#[test]
fn the_item_a_control_sits_in_picks_it_among_its_likes() {
    let goal = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
    let post = |author: &str, control: &str| {
        let mut e = element("clickable", control);
        e.text = String::new();
        e.locators = vec![Locator::Css(format!("#{author} .{control}"))];
        // Lorem ipsum says "aliquam" too: only the handle names her.
        e.record = format!("Ann {author} 3h ago Lorem aliquam dolor");
        e
    };
    let feed = page(vec![
        post("@morbi", "like"),
        post("@morbi", "reply"),
        post("@aliquam", "reply"),
        post("@aliquam", "like"),
        post("@nunc", "like"),
    ]);
    let proposals = DefaultPolicy::default().propose(&feed, &task(goal, &[]));
    let prior = |i: usize| {
        let target = target_of(&feed.elements[i]);
        proposals
            .candidates
            .iter()
            .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
            .map(|c| c.prior)
            .expect("a click on every control")
    };
    assert!(prior(3) > prior(0), "her post's Like over another's");
    assert!(prior(3) > prior(4));
    assert!(
        (prior(2) - prior(1)).abs() < 1e-9,
        "her post's Reply no more than another's: the goal names no reply"
    );
    assert!(prior(0) > prior(2), "a Like over a Reply, whoever's");
}

#[test]
fn a_field_the_form_does_not_send_takes_only_a_value_that_fits_it() {
    // Django's "Add group": a "Name" the goal's value fits, and the permission list's two
    // filter boxes, which have no name and are not sent. Before, the fill plans typed the
    // goal's value into them too (one value for three fields, reused), or its spare words
    // ("new", "named").
    let goal = "log in and add a new group named \"editors\"";
    let form = FormContext {
        name: "group_form".into(),
        submit_name: Some("Save".into()),
        posts: true,
        selector: "#group_form".into(),
        implicit: false,
    };
    let filter = |name: &str, unsent: bool| {
        let mut field = one_line_field(name, &form);
        field.locators = vec![Locator::Css(format!("#{}", name.replace(' ', "-")))];
        field.unsent = unsent;
        field
    };
    let mut save = element("button", "Save");
    save.tag = "input".into();
    save.form = Some(form.clone());
    let fields = |unsent: bool| {
        page(vec![
            filter("Name:", false),
            filter("Type into this box to filter available permissions", unsent),
            filter("Type into this box to filter chosen permissions", unsent),
            save.clone(),
        ])
    };
    let sent = form_fills(&fields(false), goal);
    assert!(
        sent.iter().any(|l| l.contains("filter available")),
        "sent fields take a value: {sent:#?}"
    );
    let fills = form_fills(&fields(true), goal);
    assert!(!fills.is_empty(), "a fill of Name");
    for fill in &fills {
        assert!(!fill.contains("filter"), "{fills:#?}");
    }
    assert!(
        fills.iter().any(|l| l.contains("\"Name:\"=\"editors\"")),
        "{fills:#?}"
    );

    // And they are no part of how well the form is filled: the fill of "Name" fits as
    // well as in a form without them (before, a third as well: one field of three).
    let fit = |observation: &Observation| {
        DefaultPolicy::default()
            .propose(observation, &task(goal, &[]))
            .candidates
            .iter()
            .find(|c| {
                c.action
                    .label()
                    .starts_with("fill \"Name:\"=\"editors\" and")
            })
            .and_then(|c| {
                c.why
                    .0
                    .iter()
                    .find(|(s, _)| *s == "values_fit")
                    .map(|w| w.1)
            })
            .expect("a fill of Name alone, with its fit")
    };
    let alone = page(vec![filter("Name:", false), save.clone()]);
    assert!(fit(&fields(true)) > 0.0);
    assert!(
        (fit(&fields(true)) - fit(&alone)).abs() < 1e-9,
        "{} against {}",
        fit(&fields(true)),
        fit(&alone)
    );
}

#[test]
fn a_field_no_value_fits_takes_the_goals_spare_words() {
    let goal = "Search for paranoid movies directed by Witt from year 2016.";
    let form = FormContext {
        name: "movies".into(),
        submit_name: Some("Search".into()),
        posts: false,
        selector: "#area".into(),
        implicit: true,
    };
    let field = |name: &str| {
        let mut e = element("textbox", name);
        e.text = String::new();
        e.tag = "input".into();
        e.input_type = "text".into();
        e.locators = vec![Locator::Css(format!("#{}", name.replace(' ', "-")))];
        e.form = Some(form.clone());
        e
    };
    let mut search = element("button", "Search");
    search.form = Some(form.clone());

    // Names that fit neither the year nor the genre ("Released Date", "Movie Genre"): the
    // goal's number, which no name fits, is tried in each of them, first where a number
    // is asked for; before, those fields took spare words only and "2016" was left out.
    let unfitting = page(vec![
        field("Movie Genre"),
        field("Director Name"),
        field("Released Date"),
        search.clone(),
    ]);
    let proposals = DefaultPolicy::default().propose(&unfitting, &task(goal, &[]));
    let first = proposals
        .candidates
        .iter()
        .filter(|c| matches!(c.action, Action::FillForm { .. }))
        .max_by(|a, b| a.prior.total_cmp(&b.prior))
        .map(|c| c.action.label())
        .unwrap_or_default();
    for pair in [
        "\"Movie Genre\"=\"paranoid\"",
        "\"Released Date\"=\"2016\"",
        "\"Director Name\"=\"Witt\"",
    ] {
        assert!(first.contains(pair), "{first}");
    }

    let movies = page(vec![
        field("Genre"),
        field("Year"),
        field("Director Name"),
        search,
    ]);
    let fills = form_fills(&movies, goal);
    let wanted = fills.iter().find(|l| {
        l.contains("\"Genre\"=\"paranoid\"")
            && l.contains("\"Year\"=\"2016\"")
            && l.contains("\"Director Name\"=\"Witt\"")
    });
    assert!(wanted.is_some(), "{fills:#?}");
    assert!(
        !fills
            .iter()
            .any(|l| l.contains("=\"directed\"") || l.contains("=\"Search\"")),
        "words the page names are no spare words: {fills:#?}"
    );

    // Unnamed fields (a copy's target beside its sources) take no spare word.
    let copy = "Copy the text from the 2nd text area below and paste it into the text input.";
    let mut fields = vec![field(""), field(""), field("")];
    for (i, f) in fields.iter_mut().enumerate() {
        f.name = String::new();
        f.nearby_text = "text".into();
        f.locators = vec![Locator::Css(format!("#f{i}"))];
    }
    let mut copying = page(fields);
    copying.values = vec![
        PageValue {
            changed: false,
            label: String::new(),
            value: "Sapien ut ultricies".into(),
            kind: PageValueKind::Field,
        },
        PageValue {
            changed: false,
            label: String::new(),
            value: "Sit mi scelerisque".into(),
            kind: PageValueKind::Field,
        },
    ];
    let fills = form_fills(&copying, copy);
    assert!(!fills.is_empty());
    let spare_word = |l: &String| {
        ["Copy", "paste", "area", "input"]
            .iter()
            .any(|w| l.contains(&format!("=\"{w}\"")))
    };
    assert!(!fills.iter().any(spare_word), "{fills:#?}");
}

/// A form of one text field, named `name`, submitted by "Submit".
fn one_field_form(name: &str) -> Element {
    let mut field = element("textbox", "");
    field.form = Some(FormContext {
        name: name.into(),
        submit_name: Some("Submit".into()),
        posts: false,
        selector: format!("#{name}"),
        implicit: false,
    });
    field
}

#[test]
fn the_answer_to_the_pages_sum_is_a_value_to_type() {
    let mut quiz = page(vec![one_field_form("answer")]);
    quiz.text_excerpt = "Solve the math problem. 7 x 6 = Submit".into();
    let labels = form_fills(&quiz, "Solve the math problem and type your answer.");
    assert!(labels.iter().any(|l| l.contains("\"42\"")), "{labels:?}");
}

#[test]
fn the_number_of_things_the_goal_asks_for_is_counted_on_the_page() {
    let count = |label: &str, value: &str| PageValue {
        changed: false,
        label: label.into(),
        value: value.into(),
        kind: PageValueKind::Count,
    };
    let mut blocks = page(vec![one_field_form("math")]);
    blocks.values = vec![
        count("visual", "2"),
        count("addition", "8"),
        count("block", "8"),
    ];
    let goal = "Type the total number of blocks into the textbox and press Submit.";
    let labels = form_fills(&blocks, goal);
    assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    assert!(!labels.iter().any(|l| l.contains("\"2\"")), "{labels:?}");
    // A goal that asks no number of anything types no count.
    let labels = form_fills(&blocks, "Type your name into the textbox and press Submit.");
    assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    // The reading turned off (its held-out measurement): no count either.
    let labels = form_fills_weighted(&blocks, goal, "counted_kind=0");
    assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    assert_eq!(
        counted_kind("How many circles are red?").as_deref(),
        Some("circle")
    );
}

#[test]
fn the_answer_to_the_pages_arithmetic_is_a_value_unless_the_reading_is_off() {
    let mut sum = page(vec![one_field_form("math")]);
    sum.text_excerpt =
        "Solve the math problem and type your answer into the textbox. 3 + 5 =".into();
    let goal =
        "Solve the math problem and type your answer into the textbox. Press submit when done.";
    let labels = form_fills(&sum, goal);
    assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    let labels = form_fills_weighted(&sum, goal, "page_arithmetic=0.5");
    assert!(labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
    let labels = form_fills_weighted(&sum, goal, "page_arithmetic=0");
    assert!(!labels.iter().any(|l| l.contains("\"8\"")), "{labels:?}");
}

#[test]
fn a_small_range_in_the_goal_is_tried_number_by_number() {
    let values = |goal: &str| form_fills(&page(vec![one_field_form("guess")]), goal);
    let small = values("Guess the number between 0-9 and press Submit.");
    for n in 0..=9 {
        assert!(
            small.iter().any(|l| l.contains(&format!("\"{n}\""))),
            "{n}: {small:?}"
        );
    }
    // A range wider than MAX_RANGE_VALUES is not spelled out.
    let wide = values("Guess the number between 0-999 and press Submit.");
    assert!(!wide.iter().any(|l| l.contains("\"500\"")), "{wide:?}");
}
#[test]
fn the_goals_numbers_are_what_its_sliders_are_moved_to() {
    assert_eq!(
        goal_numbers("Select -97 with the slider and hit Submit."),
        ["-97"]
    );
    assert_eq!(
        goal_numbers("Set the sliders to the combination [3,18,3] and submit."),
        ["3", "18", "3"]
    );
    // Ordinals, dates, times and words with digits are not numbers to move to.
    assert!(
        goal_numbers("Click the 2nd checkbox on 11/25/2016 at 10:30 for x3 then rate-5 2.5")
            .iter()
            .eq(["2.5"].iter())
    );
    let mut slider = element("slider", "");
    slider.locators = vec![Locator::Css("#s1 > span".into())];
    let mut second = element("slider", "");
    second.locators = vec![Locator::Css("#s2 > span".into())];
    let slides = |elements: Vec<Element>, goal: &str| -> Vec<(String, f64)> {
        DefaultPolicy::default()
            .propose(&page(elements), &task(goal, &[]))
            .candidates
            .into_iter()
            .filter_map(|c| match c.action {
                Action::Slide { moves } => {
                    let moves: Vec<String> = moves
                        .iter()
                        .map(|m| format!("{} {}", m.target.locators[0], m.value))
                        .collect();
                    Some((moves.join(", "), c.prior))
                }
                _ => None,
            })
            .collect()
    };
    let submit = element("button", "Submit");
    // As many numbers as sliders: each its own, in order, in one action.
    let ordered = slides(
        vec![slider.clone(), second.clone(), submit.clone()],
        "Set the sliders to the combination [7,7] and submit.",
    );
    let labels: Vec<&str> = ordered.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["css=#s1 > span 7, css=#s2 > span 7"],
        "{ordered:?}"
    );
    // Otherwise every slider to every number, once each.
    let every = slides(
        vec![slider.clone(), submit.clone()],
        "Move the slider to 4, or to 9, or 4 again.",
    );
    assert_eq!(every.len(), 2, "{every:?}");
    // A slide the goal asks for outranks the button; numbers in a goal that speaks of
    // no slider are a weak hint only.
    let against_the_button = |goal: &str| {
        let candidates = DefaultPolicy::default()
            .propose(
                &page(vec![slider.clone(), submit.clone()]),
                &task(goal, &[]),
            )
            .candidates;
        let prior = |slide: bool| {
            candidates
                .iter()
                .find(|c| matches!(c.action, Action::Slide { .. }) == slide)
                .map_or(0.0, |c| c.prior)
        };
        prior(true) / prior(false)
    };
    let asked = against_the_button("Select 48 with the slider.");
    let other = against_the_button("Order 48 apples.");
    assert!(asked > 1.0 && asked > 3.0 * other, "{asked} vs {other}");
    // No numbers, no slides; no slider, no slides.
    assert!(slides(vec![slider.clone(), submit.clone()], "Use the slider.").is_empty());
    assert!(slides(vec![submit], "Select 48 with the slider.").is_empty());
}
