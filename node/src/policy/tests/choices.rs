//! Choices the goal names (checkboxes, likes, steppers, shapes) and the progress a page shows
//! in them, in its values and in its calendar.

use super::*;

#[test]
fn likes_pressed_on_the_named_users_posts_are_progress() {
    let goal = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
    let reading = GoalReading::of(goal);
    let feed = |pressed: &[usize]| {
        let posts = ["@aliquam Vel quis", "@morbi Nunc eget", "@aliquam Sed et"];
        let mut elements: Vec<Element> = posts
            .iter()
            .enumerate()
            .map(|(i, post)| {
                let mut like = element("clickable", "like");
                like.record = (*post).into();
                like.checked = pressed.contains(&i);
                like
            })
            .collect();
        elements.push(element("button", "Submit"));
        page(elements)
    };
    let choices = |pressed: &[usize]| goal_progress(&feed(pressed), &reading, goal).choices;
    assert_eq!(choices(&[]), Some(0.0));
    assert_eq!(choices(&[0]), Some(0.5));
    assert_eq!(choices(&[0, 2]), Some(1.0));
    // A like on another's post costs half of one.
    assert_eq!(choices(&[0, 1, 2]), Some(0.75));
    // One such control (a "Mute" in one open menu) is a click, not a count.
    let mute = "For the user @et, click on the \"Mute\" button.";
    let mut menu = element("clickable", "Mute");
    menu.record = "@et Lorem ipsum".into();
    let observation = page(vec![menu]);
    assert_eq!(
        goal_progress(&observation, &GoalReading::of(mute), mute).choices,
        None
    );
}

#[test]
fn a_form_with_an_empty_field_for_the_goals_value_ranks_above_the_page_before_it() {
    // MiniWoB++ email-inbox-forward-nl-turk, development seeds 2002-2004: the forward form
    // (its "to" empty, the sender no longer shown) was valued below the email it came
    // from and below the reply form, and its send was tried before its fill.
    let goal = "Find yesterday's emails from Devon and forward them to Donielle.";
    let reading = GoalReading::of(goal);
    let policy = DefaultPolicy::default();
    let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
    let placeable = |o: &Observation| goal_progress(o, &reading, goal).placeable;
    let forward = compose_form("", "Et volutpat. Tincidunt enim.");
    // A reply, as MiniWoB++ draws it: the sender as text, the body empty; a name goes in
    // no body.
    let header = "to: Devon subject: Re: Et volutpat.";
    let mut body = element("textbox", header);
    body.tag = "textarea".into();
    let mut reply = page(vec![body, element("clickable", "send reply")]);
    reply.text_excerpt = format!("{goal} {header}");
    assert_eq!(placeable(&forward), Some(1.0));
    assert_eq!(placeable(&reply), Some(0.0));
    assert!(value(&forward) > value(&reply));
    assert!(
        value(&forward) < value(&open_email(goal, "Devon")),
        "her email open shows her name"
    );
    // Typed, the recipient is held: more than a place for it.
    let typed = compose_form("Donielle", "Et volutpat. Tincidunt enim.");
    assert_eq!(placeable(&typed), Some(0.0));
    assert!(value(&typed) > value(&forward));
    // A search box is no place for a value unless the goal searches.
    let form = FormContext {
        name: "search".into(),
        submit_name: None,
        posts: false,
        selector: "#search".into(),
        implicit: true,
    };
    let mut search = page(vec![one_line_field("Search", &form)]);
    search.text_excerpt = "Search".into();
    assert_eq!(placeable(&search), Some(0.0));
}

#[test]
fn a_calendar_steps_toward_the_goals_month_then_takes_its_day() {
    let policy = DefaultPolicy::default();
    let goal = task("Select 04/08/2016 as the date and hit submit.", &[]);
    let calendar = |shown: &str| {
        let mut observation = page(
            ["Prev", "Next", "8", "12", "Submit"]
                .into_iter()
                .map(|n| element("link", n))
                .collect(),
        );
        observation.text_excerpt = format!("Date: Prev Next {shown} Su Mo Tu 1 2 3");
        policy.propose(&observation, &goal)
    };
    let prior = |proposals: &Proposals, name: &str| {
        proposals
            .candidates
            .iter()
            .find(|c| {
                c.action
                    == Action::Click {
                        target: target_of(&element("link", name)),
                    }
            })
            .map(|c| c.prior)
            .expect("proposed")
    };
    let proposed = |proposals: &Proposals, name: &str| {
        proposals.candidates.iter().any(|c| {
            c.action
                == Action::Click {
                    target: target_of(&element("link", name)),
                }
        })
    };
    let december = calendar("December 2016");
    assert!(prior(&december, "Prev") > 2.0 * prior(&december, "Next"));
    // Days of another month than the goal's are not offered.
    assert!(!proposed(&december, "8") && !proposed(&december, "12"));
    // The walk back to April in one action, ranked first.
    let walk = december
        .candidates
        .iter()
        .max_by(|a, b| a.prior.total_cmp(&b.prior))
        .expect("candidates");
    assert_eq!(walk.action.label(), "click \"Prev\" 8 times");
    // A month away: one click, no walk.
    let may = calendar("May 2016");
    assert!(
        may.candidates
            .iter()
            .all(|c| !matches!(c.action, Action::Repeat { .. }))
    );
    assert!(prior(&may, "Prev") > prior(&may, "Next"));
    let january = calendar("January 2016");
    assert!(prior(&january, "Next") > 2.0 * prior(&january, "Prev"));
    let april = calendar("April 2016");
    for other in ["Prev", "Next", "Submit"] {
        assert!(prior(&april, "8") > 2.0 * prior(&april, other), "{other}");
    }
    // At the goal's month, only the goal's day.
    assert!(!proposed(&april, "12"));
    // The nearer the month, the higher the page's value.
    let value = |shown| calendar(shown).value_hint;
    assert!(value("April 2016") > value("June 2016"));
    assert!(value("June 2016") > value("December 2016"));
}

#[test]
fn a_named_choice_already_made_is_not_clicked_again_and_buttons_wait_for_the_rest() {
    let choice = |role: &str, name: &str, checked: bool| {
        let mut e = element(role, name);
        e.tag = "input".into();
        e.checked = checked;
        e
    };
    let goal = "Check \"Beta\" and \"Delta\", choose \"Large\" and press Submit";
    let priors = |elements: Vec<Element>, goal: &str| -> Vec<(String, f64)> {
        DefaultPolicy::default()
            .propose(&page(elements), &task(goal, &[]))
            .candidates
            .iter()
            .filter_map(|c| c.action.target().map(|t| (t.name.clone(), c.prior)))
            .collect()
    };
    let of = |priors: &[(String, f64)], name: &str| {
        priors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .expect("proposed")
    };
    let fresh = priors(
        vec![
            choice("checkbox", "Beta", false),
            choice("checkbox", "Delta", false),
            choice("radio", "Large", false),
            element("button", "Submit"),
        ],
        goal,
    );
    let half = priors(
        vec![
            choice("checkbox", "Beta", true),
            choice("checkbox", "Delta", false),
            choice("radio", "Large", true),
            element("button", "Submit"),
        ],
        goal,
    );
    // Checked Beta and chosen Large fall behind Delta, which is still to do; so does Submit.
    assert!(of(&half, "Beta") * 3.0 < of(&half, "Delta"), "{half:?}");
    assert!(of(&half, "Large") * 3.0 < of(&half, "Delta"), "{half:?}");
    assert!(of(&half, "Submit") < of(&half, "Delta"), "{half:?}");
    let done = priors(
        vec![
            choice("checkbox", "Beta", true),
            choice("checkbox", "Delta", true),
            choice("radio", "Large", true),
            element("button", "Submit"),
        ],
        goal,
    );
    // With every choice made, Submit leads; before, it waited.
    let best = done
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("candidates");
    assert_eq!(best.0, "Submit", "{done:?}");
    // Untouched, the three choices are one action, tried first.
    let proposals = DefaultPolicy::default().propose(
        &page(vec![
            choice("checkbox", "Alpha", false),
            choice("checkbox", "Beta", false),
            choice("checkbox", "Delta", false),
            choice("radio", "Large", false),
            element("button", "Submit"),
        ]),
        &task(goal, &[]),
    );
    let top = proposals
        .candidates
        .iter()
        .max_by(|a, b| a.prior.total_cmp(&b.prior))
        .expect("candidates");
    assert_eq!(top.action.label(), "check \"Beta\", \"Delta\", \"Large\"");
    let submit_share = |p: &[(String, f64)]| of(p, "Submit") / p.iter().map(|x| x.1).sum::<f64>();
    assert!(
        submit_share(&fresh) < submit_share(&done),
        "{fresh:?} {done:?}"
    );
    // A goal that clears choices clicks a checked box it names.
    let clearing = priors(
        vec![
            choice("checkbox", "Beta", true),
            choice("checkbox", "Delta", false),
            element("button", "Submit"),
        ],
        "Uncheck \"Beta\" and press Submit",
    );
    assert!(
        of(&clearing, "Beta") > of(&clearing, "Delta"),
        "{clearing:?}"
    );
}

#[test]
fn the_choices_the_goal_names_order_the_states_of_a_page() {
    let goal = "Check \"Beta\" and \"Delta\", choose \"Large\" and press Submit";
    let value = |checked: &[&str]| {
        let elements = ["Alpha", "Beta", "Gamma", "Delta", "Large"]
            .iter()
            .map(|name| {
                let mut e = element(
                    if *name == "Large" {
                        "radio"
                    } else {
                        "checkbox"
                    },
                    name,
                );
                e.tag = "input".into();
                e.checked = checked.contains(name);
                e
            })
            .chain([element("button", "Submit")])
            .collect();
        DefaultPolicy::default()
            .propose(&page(elements), &task(goal, &[]))
            .value_hint
    };
    let steps = [
        value(&[]),
        value(&["Beta"]),
        value(&["Beta", "Delta"]),
        value(&["Beta", "Delta", "Large"]),
    ];
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    // A box the goal does not name is no progress, and costs some once others are made.
    assert!(value(&["Alpha"]) <= steps[0]);
    assert!(value(&["Beta", "Alpha"]) < steps[1]);
}

#[test]
fn text_typed_into_a_search_box_is_progress_only_when_the_goal_is_to_search() {
    let typed_into = |label: &str| {
        let mut field = element("textbox", label);
        field.tag = "input".into();
        field.input_type = "text".into();
        // The sender is shown (found, not typed).
        let mut observation = page(vec![element("heading", "From Andria"), field]);
        observation.values = vec![PageValue {
            changed: false,
            label: label.into(),
            value: "Varius. Morbi.".into(),
            kind: PageValueKind::Field,
        }];
        observation
    };
    let reply = "Find the email by Andria and reply to them with the text \"Varius. Morbi.\".";
    let progress = |observation: &Observation, goal: &str| {
        goal_progress(observation, &GoalReading::of(goal), goal)
            .values
            .expect("a value is wanted")
    };
    assert_eq!(progress(&typed_into("Message"), reply), 1.0);
    assert_eq!(progress(&typed_into("Search"), reply), 0.0);
    let search = "Search for \"Varius. Morbi.\" and open the first result";
    assert_eq!(progress(&typed_into("Search"), search), 1.0);
    // A name the page does not show is a value to type.
    let forward = "Find the email by Andria and forward that email to Ibby.";
    assert_eq!(progress(&typed_into("to"), forward), 0.0);
}

#[test]
fn a_multiple_choice_list_gets_every_option_the_goal_names_at_once() {
    let mut list = element("listbox", "");
    list.tag = "select".into();
    list.options = ["Fayette", "Claudie", "Danit", "Fay"]
        .iter()
        .map(|name| forager_protocol::observation::SelectOption {
            value: name.to_string(),
            label: name.to_string(),
        })
        .collect();
    let proposals = DefaultPolicy::default().propose(
        &page(vec![list, element("button", "Submit")]),
        &task(
            "Select Fayette, Claudie from the scroll list and click Submit.",
            &[],
        ),
    );
    let chosen: Vec<&str> = proposals
        .candidates
        .iter()
        .filter_map(|c| match &c.action {
            Action::Select { option, .. } => Some(option.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        chosen,
        vec!["Fayette\nClaudie"],
        "whole names only, in list order"
    );
    let nothing = DefaultPolicy::default().propose(
        &page(vec![element("listbox", "")]),
        &task("Select Fayette", &[]),
    );
    assert!(
        nothing
            .candidates
            .iter()
            .all(|c| !matches!(c.action, Action::Select { .. }))
    );
}

#[test]
fn the_steppers_of_the_dishes_the_goal_names_come_first() {
    let dishes = [
        "Caesar Salad vegan gluten-free",
        "Chicken wings meat",
        "Grilled Pork Tenderloin meat gluten-free",
        "Spaghetti and Meatballs meat",
        "Ice cream sundae dairy peanuts gluten-free",
        "Coconut mango tart vegan",
    ];
    let mut elements = Vec::new();
    for (n, dish) in dishes.iter().enumerate() {
        for control in ["-", "+"] {
            let mut e = element("clickable", control);
            e.tag = "span".into();
            e.locators = vec![Locator::Css(format!("#dish{n} .{control}"))];
            e.record = format!("{dish} - +");
            elements.push(e);
        }
    }
    let mut order = element("button", "Order!");
    order.tag = "button".into();
    elements.push(order);
    let menu = page(elements);
    let priors = |goal: &str| {
        let proposals = DefaultPolicy::default().propose(&menu, &task(goal, &[]));
        menu.elements
            .iter()
            .map(|e| {
                let target = target_of(e);
                let click = proposals
                    .candidates
                    .iter()
                    .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
                    .map(|c| c.prior)
                    .expect("a click on every control");
                let repeat = proposals
                    .candidates
                    .iter()
                    .find(|c| matches!(&c.action, Action::Repeat { target: t, .. } if *t == target))
                    .map(|c| (c.prior, c.action.label()));
                (click, repeat)
            })
            .collect::<Vec<_>>()
    };
    let one_of_each = "Order one of each item: Grilled Pork Tenderloin, Ice cream sundae";
    let named = priors(one_of_each);
    let (pork, sundae, wings) = (&named[4..6], &named[8..10], &named[2..4]);
    for (lifted, (click, repeat)) in pork.iter().chain(sundae).enumerate() {
        assert!(*click > wings[lifted % 2].0 * 2.0, "{named:?}");
        assert!(repeat.is_none(), "one of each: no count to repeat");
    }
    // Each named dish's "+" (and, for the search to rule out, each one's "-") in one action.
    let presses = |goal: &str| -> Vec<Vec<Target>> {
        DefaultPolicy::default()
            .propose(&menu, &task(goal, &[]))
            .candidates
            .into_iter()
            .filter_map(|c| match c.action {
                Action::Check { targets } => Some(targets),
                _ => None,
            })
            .collect()
    };
    let plus = |dish: usize| target_of(&menu.elements[dish * 2 + 1]);
    assert!(presses(one_of_each).contains(&vec![plus(2), plus(4)]));
    // The reading turned off (its held-out measurement): no dish's controls in one action,
    // none pressed as often as the goal counts.
    let unread = DefaultPolicy::default()
        .with_weights(signals::Weights::parse("item_controls=0").expect("a known reading"))
        .propose(&menu, &task("Order 4 items that are vegan", &[]))
        .candidates;
    assert!(
        !unread
            .iter()
            .any(|c| matches!(c.action, Action::Check { .. } | Action::Repeat { .. })),
        "{unread:?}"
    );
    // Two of the two vegan dishes, not of some other.
    assert_eq!(
        presses("Order 2 items that are vegan")
            .into_iter()
            .filter(|t| t[0].name == "+")
            .collect::<Vec<_>>(),
        vec![vec![plus(0), plus(5)]]
    );
    let vegan = priors("Order 4 items that are vegan");
    for (n, (click, repeat)) in vegan.iter().take(12).enumerate() {
        let dish = dishes[n / 2];
        if dish.contains("vegan") {
            assert!(*click > vegan[2].0 * 2.0, "{vegan:?}");
            let (_, label) = repeat
                .as_ref()
                .expect("a vegan dish's control pressed 4 times");
            assert!(label.ends_with("4 times"), "{label}");
        } else {
            assert!(repeat.is_none());
        }
    }
}

#[test]
fn the_likes_of_all_her_posts_are_pressed_in_one_action() {
    let post = |n: usize, author: &str, control: &str, pressed: bool| {
        let mut e = element("clickable", control);
        e.text = String::new();
        e.locators = vec![Locator::Css(format!("#post{n} .{control}"))];
        e.record = format!("Ann {author} Lorem dolor");
        e.checked = pressed;
        e
    };
    let feed = |pressed: bool| {
        page(vec![
            post(0, "@aliquam", "like", false),
            post(1, "@morbi", "like", false),
            post(0, "@aliquam", "reply", false),
            post(3, "@aliquam", "like", pressed),
            post(4, "@aliquam", "like", false),
        ])
    };
    let group = |goal: &str, pressed: bool| {
        let feed = feed(pressed);
        DefaultPolicy::default()
            .propose(&feed, &task(goal, &[]))
            .candidates
            .into_iter()
            .find_map(|c| match c.action {
                Action::Check { targets } => Some(
                    targets
                        .iter()
                        .map(|t| t.locators[0].clone())
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
    };
    let css = |s: &str| Locator::Css(s.into());
    let all = "Click the \"Like\" button on all posts by @aliquam and then click Submit.";
    assert_eq!(
        group(all, false),
        Some(vec![
            css("#post0 .like"),
            css("#post3 .like"),
            css("#post4 .like")
        ])
    );
    // One already pressed is left as it is (pressing it again would undo it).
    assert_eq!(
        group(all, true),
        Some(vec![css("#post0 .like"), css("#post4 .like")])
    );
    // Her pressed Like is not clicked again before the others (it would be undone).
    let pressed = feed(true);
    let proposals = DefaultPolicy::default().propose(&pressed, &task(all, &[]));
    let prior = |i: usize| {
        let target = target_of(&pressed.elements[i]);
        proposals
            .candidates
            .iter()
            .find(|c| matches!(&c.action, Action::Click { target: t } if *t == target))
            .map(|c| c.prior)
            .expect("a click on every control")
    };
    assert!(prior(3) < prior(4) && prior(3) < prior(1), "{proposals:?}");
    // Without "all" the goal may mean one of them: they are clicked one at a time.
    let one = "Click the \"Like\" button on a post by @aliquam.";
    assert_eq!(group(one, false), None);
    // Where the goal gives their number, that many of hers: the first ones not pressed,
    // less those pressed already.
    let two = "Click the \"Like\" button on 2 posts by @aliquam and then click Submit.";
    assert_eq!(
        group(two, false),
        Some(vec![css("#post0 .like"), css("#post3 .like")])
    );
    let three = "Click the \"Like\" button on 3 posts by @aliquam and then click Submit.";
    assert_eq!(
        group(three, true),
        Some(vec![css("#post0 .like"), css("#post4 .like")])
    );
    // One left to press is a click.
    assert_eq!(group(two, true), None);
    // Progress counts to the number: two of three pressed is the whole of "2 posts", and
    // a third pressed is one too many.
    let reading = GoalReading::of(two);
    let mut feed = feed(true);
    let share = |feed: &Observation| goal_progress(feed, &reading, two).choices;
    assert_eq!(share(&feed), Some(0.5));
    feed.elements[0].checked = true;
    assert_eq!(share(&feed), Some(1.0));
    feed.elements[4].checked = true;
    assert_eq!(share(&feed), Some(0.75));
    assert_eq!(item_count(&padded_words(three)), Some(3));
    assert_eq!(item_count(&padded_words("Like two posts by @et")), Some(2));
    assert_eq!(item_count(&padded_words(all)), None);
}

#[test]
fn all_the_shapes_the_goal_names_are_selected_in_one_action() {
    let tile = |n: usize, colour: &str, selected: bool| {
        let mut e = element("clickable", colour);
        e.text = String::new();
        e.locators = vec![Locator::Css(format!("#area > span:nth-of-type({n})"))];
        e.checked = selected;
        e
    };
    let tiles = |selected: bool| {
        page(vec![
            tile(1, "blue", false),
            tile(2, "red", false),
            tile(3, "green", false),
            tile(4, "red", selected),
            tile(5, "red", false),
            element("button", "Submit"),
        ])
    };
    let goal = "Select all the shades of red and press Submit.";
    let proposals = |selected: bool| {
        DefaultPolicy::default()
            .propose(&tiles(selected), &task(goal, &[]))
            .candidates
    };
    let group = |selected: bool| {
        proposals(selected)
            .into_iter()
            .find_map(|c| match c.action {
                Action::Check { targets } => Some(
                    targets
                        .iter()
                        .map(|t| t.locators[0].clone())
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            })
    };
    let css = |n: usize| Locator::Css(format!("#area > span:nth-of-type({n})"));
    assert_eq!(group(false), Some(vec![css(2), css(4), css(5)]));
    assert_eq!(group(true), Some(vec![css(2), css(5)]));
    // A selected one is not clicked again before the rest (it would be unselected).
    let selected = proposals(true);
    let prior = |n: usize| {
        selected
            .iter()
            .find(|c| matches!(&c.action, Action::Click { target } if target.locators[0] == css(n)))
            .map(|c| c.prior)
            .expect("a click on every tile")
    };
    assert!(prior(4) < prior(2), "{selected:?}");
}

#[test]
fn numbers_marked_by_their_parity_raise_the_pages_value() {
    let row = |number: i64, marked: Option<&str>| {
        ["Odd", "Even"].map(|name| {
            let mut e = element("button", name);
            e.record = format!("Odd {number} Even");
            e.locators = vec![Locator::Css(format!("#n{number} .{name}"))];
            e.checked = marked == Some(name);
            e
        })
    };
    let board = |marks: [Option<&str>; 3]| {
        let mut elements: Vec<Element> = [3, 8, -5]
            .iter()
            .zip(marks)
            .flat_map(|(&n, m)| row(n, m))
            .collect();
        elements.push(element("button", "Submit"));
        page(elements)
    };
    let goal = "Mark the numbers below as odd or even and press submit when done.";
    let policy = DefaultPolicy::default();
    let value = |o: &Observation| policy.propose(o, &task(goal, &[])).value_hint;
    let none = board([None, None, None]);
    let one = board([Some("Odd"), None, None]);
    let two = board([Some("Odd"), Some("Even"), None]);
    let wrong = board([Some("Even"), Some("Even"), None]);
    assert!(value(&one) > value(&none));
    assert!(value(&two) > value(&one));
    assert!(value(&wrong) < value(&two));
    // And the fitting control first.
    let proposals = policy.propose(&none, &task(goal, &[]));
    let prior = |css: &str| {
        proposals
            .candidates
            .iter()
            .find(|c| {
                matches!(&c.action, Action::Click { target }
                    if target.locators == vec![Locator::Css(css.into())])
            })
            .map(|c| c.prior)
            .expect("a click")
    };
    assert!(prior("#n3 .Odd") > prior("#n3 .Even"));
    assert!(prior("#n8 .Even") > prior("#n8 .Odd"));
}
