//! Actions on pages that generate their content in script: the patterns of the MiniWoB++
//! benchmark, each on its own fixture page (`sites::dynamic`), searched end to end by the real
//! binary in real Chromium. Every page sets `window.REWARD = 1` when its task is done and
//! `window.FAILED = true` when a wrong move ended it; the runs use those as success and
//! failure predicates, declare the page a sandbox (`--resettable`, ceiling 7: its buttons are
//! called "Submit") and must pass, reproduced by a second node. (With one node they ran 17%
//! faster, 120 s against 145 s for the 35 tests three at a time, but a node that finds and
//! reproduces alone publishes the first path it finds: `tabs` came out a step longer.)
//!
//! What each page caught, before the change that made it pass: `overlay` (a success whose
//! page looks like the one before it was pruned as "no progress"), `tabs` (in-page `#anchor`
//! links were taken for links to the page itself and never clicked; a panel switch changed
//! nothing the fingerprint saw), `collapsible` and `mouse` (elements that only a page's
//! listeners make clickable were never proposed), `dialog` (the icon without text; the
//! covered button was proposed and failed), `typed` (a field outside a form could only be
//! typed into with Enter, and its value was not part of the state), `choices` (a wrong
//! submission was not a dead end; later, one box at a time, the search spent up to 400
//! actions on the orders of the same three clicks), `scroll-list` (items below the fold of their container),
//! `edge` (a control half outside its clipping box was clicked outside it). `rerender` (new
//! elements on every render) passed before and guards the locators. `autocomplete` (the
//! suggestions came 300 ms after typing, after the page had been taken as settled) and
//! `multiple` (a multiple-choice list had no action) came later, from the same benchmark;
//! `agreement` and `read-to-top` (a box of text to scroll to its end or start: there was no
//! scroll action) too, and `datepicker` (a calendar stepped month by month to the goal's date,
//! faded out on an interval after a day is picked: the page was observed mid-fade, the
//! submit button still covered, and every month looked as near the goal as any other).
//! `table-form` too: fields labelled only by their row's `<th>`, a `<div>` for a submit
//! button, and a value that is a plain word of the goal (the fields had no names, the form no
//! submit, and no value source offered the word). `forward`: a reply form whose "to" holds the
//! sender and a forward form whose message is quoted (Enter pressed in the message body made
//! ever new states, the recipient's name typed as a reply's text looked like the goal done,
//! and the name went over the quoted message before into the empty "to"). `captcha`: letters in
//! spans inside a `<div>` that the goal calls "the text below" (no value source offered them).
//! `submenu`: items that appear half a second after the pointer enters their parent item (the
//! timer a hover sets was not awaited, so the page was read before they came). `shades`: tiles
//! with nothing but a colour, "all the shades of red" (they had no name, and one at a time the
//! search spent its budget on their orders). `dice`: a button that draws a random number
//! and shows the same thing four times running (MiniWoB++'s generate-number: after two
//! clicks that changed nothing the fingerprint sees, a third was cut as no progress).

use forager_protocol::result::RunResult;
use forager_tests::sites::{self, Fixture};
use forager_tests::{Run, forager};

async fn run(fixture: &Fixture, test: &str, path: &str, goal: &str, budget: &str) -> Run {
    forager(
        test,
        &[
            "--url",
            &fixture.url(path),
            "--goal",
            goal,
            "--success-js",
            "window.REWARD === 1",
            "--fail-js",
            "window.FAILED === true",
            "--resettable",
            "--risk-ceiling",
            "7",
            "--budget",
            budget,
        ],
    )
    .await
}

fn passed(run: &Run) -> &RunResult {
    run.passed()
}

/// The run's compiled workflow replays, without search, in `steps` steps.
async fn replays(run: &Run, test: &str, steps: usize) {
    let workflow = run.out.join("workflow.json");
    let replay = forager_tests::forager(test, &["replay", &workflow.to_string_lossy()]).await;
    let Some(replayed) = replay.result.as_ref() else {
        panic!("no replay result: {}", replay.stderr);
    };
    assert_eq!(
        replay.code,
        Some(0),
        "{:?} {}",
        replayed.error,
        replay.stderr
    );
    assert_eq!(replayed.steps.len(), steps);
}

fn labels(result: &RunResult) -> Vec<&str> {
    result.steps.iter().map(|s| s.label.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_generated_after_an_overlay_click() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(
        &site,
        "dyn-overlay",
        "/overlay",
        "Click the \"Blue\" button",
        "40",
    )
    .await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"Begin\"", "click \"Blue\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_with_in_page_anchors() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Switch tabs to find the word \"Zephyr\" and click it";
    let run = run(&site, "dyn-tabs", "/tabs", goal, "40").await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"Third\"", "click \"Zephyr\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collapsible_sections_with_listening_headers() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Open the second section and press Submit";
    let run = run(&site, "dyn-collapsible", "/collapsible", goal, "40").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["click \"Section two\"", "click \"Submit\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modal_dialog_closed_by_an_icon() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Close the dialog, then press Continue";
    let run = run(&site, "dyn-dialog", "/dialog", goal, "40").await;
    let result = passed(&run);
    // The icon has no text: its classes name it.
    assert_eq!(
        labels(result),
        ["click \"close icon\"", "click \"Continue\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkboxes_and_a_radio_group_checked_on_submit() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Check \"Beta\" and \"Delta\", choose \"Large\" and press Submit";
    let run = run(&site, "dyn-choices", "/choices", goal, "40").await;
    let result = passed(&run);
    // The three choices the goal names, made in one action, are the first branch.
    let journal = std::fs::read_to_string(run.out.join("events.jsonl")).expect("the event log");
    let first_branch = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["event"] == "assigned" && e["branch"] == 0)
        .and_then(|e| e["action"].as_str().map(str::to_owned));
    assert_eq!(
        first_branch.as_deref(),
        Some("check \"Beta\", \"Delta\", \"Large\"")
    );
    // Two nodes search side by side; the path reproduced first wins (a shorter one found while
    // a longer one is reproduced is preferred, one found after is not). Either way the three
    // are chosen, then Submit, in no more than three steps.
    let steps = labels(result);
    assert!(steps.len() <= 3, "{steps:?}");
    assert_eq!(steps.last(), Some(&"click \"Submit\""), "{steps:?}");
    for choice in ["\"Beta\"", "\"Delta\"", "\"Large\""] {
        assert!(steps.iter().any(|s| s.contains(choice)), "{steps:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiles_named_by_their_colour_are_selected_together() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Select all the shades of red and press Submit.";
    let run = run(&site, "dyn-shades", "/shades", goal, "40").await;
    let result = passed(&run);
    // The three red tiles, whatever their shade, in one action; then Submit.
    assert_eq!(
        labels(result),
        ["check \"red\", \"red\", \"red\"", "click \"Submit\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_submission_is_a_dead_end() {
    let site = sites::serve(sites::dynamic()).await;
    // A goal that names none of the choices: Submit is tried, fails, and must not be searched
    // past; the run fails within its budget.
    let run = run(&site, "dyn-wrong", "/choices", "Press Submit", "12").await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(result.error.is_some());
    let journal = std::fs::read_to_string(run.out.join("events.jsonl")).expect("the event log");
    assert!(
        journal.contains("\"status\":\"dead_end\""),
        "no dead end recorded"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_checked_when_its_button_is_pressed() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Type \"walnut\" into the Word box and press Check";
    let run = run(&site, "dyn-typed", "/typed", goal, "40").await;
    let result = passed(&run);
    let last = result.steps.last().expect("a step");
    assert!(last.label.contains("walnut"), "{:?}", labels(result));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_form_with_a_div_for_submit_and_a_plain_word_for_value() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Search for noir movies directed by Lang from year 1931.";
    let run = run(&site, "dyn-table-form", "/table-form", goal, "40").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["fill \"Year\"=\"1931\", \"Director\"=\"Lang\", \"Genre\"=\"noir\" and click \"Submit\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_shown_below_is_typed_from_letters_in_spans() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Type the text below into the text field and press Submit.";
    let run = run(&site, "dyn-captcha", "/captcha", goal, "20").await;
    let result = passed(&run);
    assert!(
        labels(result).iter().any(|l| l.contains("\"qZtW\"")),
        "{:?}",
        labels(result)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submenu_that_opens_while_the_pointer_rests_on_its_item() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Find and click on the item labeled \"Prev\".";
    let run = run(&site, "dyn-submenu", "/submenu", goal, "20").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["click \"Playback\"", "click \"Prev\""],
        "the submenu's item, reached through its parent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submenus_whose_parents_a_click_would_choose_are_opened_by_pointing() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(
        &site,
        "dyn-choose-menu",
        "/choose-menu",
        "Select File>Export>PDF",
        "30",
    )
    .await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["hover \"File\"", "hover \"Export\"", "click \"PDF\""],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forward_types_the_recipient_and_keeps_the_quoted_message() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Send Marlena the email from Caprice.";
    let run = run(&site, "dyn-forward", "/forward", goal, "40").await;
    let result = passed(&run);
    let steps = labels(result);
    assert_eq!(steps.first(), Some(&"click \"Forward\""), "{steps:?}");
    assert!(steps.contains(&"fill \"to\" with \"Marlena\""), "{steps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_scrolls_inside_its_container() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(
        &site,
        "dyn-scroll",
        "/scroll-list",
        "Click \"Quokka\" in the list",
        "40",
    )
    .await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"Quokka\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widgets_that_listen_to_mousedown_and_mouseup() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(
        &site,
        "dyn-mouse",
        "/mouse",
        "Turn the switch on, then Save",
        "40",
    )
    .await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"off\"", "click \"Save\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_half_outside_its_clipping_box() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(&site, "dyn-edge", "/edge", "Press the \"Far\" button", "40").await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"Far\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elements_recreated_on_every_render() {
    let site = sites::serve(sites::dynamic()).await;
    let run = run(
        &site,
        "dyn-rerender",
        "/rerender",
        "Click \"Alpha\", then \"Gamma\"",
        "60",
    )
    .await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"Alpha\"", "click \"Gamma\""]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suggestions_that_come_after_a_delay() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Enter an item that starts with \"Lith\" and ends with \"ania\", then Submit";
    let run = run(&site, "dyn-autocomplete", "/autocomplete", goal, "150").await;
    let result = passed(&run);
    assert!(
        labels(result).contains(&"click \"Lithuania\""),
        "{:?}",
        labels(result)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_takes_the_suggestions_that_hold_what_was_typed() {
    // Each field takes only an airport from its suggestion list: filled as a person fills it
    // (the suggestion holding "LIH" taken), the form is one action; typed alone, the search
    // finds nothing.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Search the flights from: LIH to: West Palm Beach, FL.";
    let run = run(&site, "dyn-airports", "/airports", goal, "40").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["fill \"From:\"=\"LIH\", \"To:\"=\"West Palm Beach, FL\" and click \"Search\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_popup_that_takes_a_field_away_is_dismissed_and_the_field_typed_into() {
    // Typing into the password fails while the popup its focus brings up is there; dismissed,
    // the page looks as before (a loop by its fingerprint), yet the field takes typing now.
    let site = sites::serve(sites::dynamic()).await;
    let goal =
        "Enter the username \"ada\" and the password \"x9Q\" into the text fields and press login.";
    let run = run(&site, "dyn-popup-login", "/popup-login", goal, "150").await;
    let result = passed(&run);
    let steps = labels(result);
    assert!(steps.contains(&"click \"Cancel\""), "{steps:?}");
    assert!(
        steps.last().is_some_and(|s| s.starts_with("fill ")),
        "{steps:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sliders_are_moved_with_the_keyboard_to_the_goals_numbers() {
    // Handles with no ARIA: which number moves with each, and by how much a key moves it, is
    // learnt by pressing; both sliders are one action, and the workflow moves them again.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Set the sliders to the combination [-3,35] and submit.";
    let run = run(&site, "dyn-sliders", "/sliders", goal, "40").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        [
            "slide \"slider handle\" to -3, \"slider handle\" to 35",
            "click \"Submit\""
        ]
    );
    replays(&run, "dyn-sliders-replay", result.steps.len()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_steppers_of_the_dishes_the_goal_names_are_pressed_in_their_items() {
    // Every dish has a "-" and a "+": only its item tells them apart. The dishes the goal
    // names get theirs pressed together, then Order!; the workflow presses the same ones.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Order one of each item: Garlic bread, Cheese wheel";
    let run_named = run(&site, "dyn-dishes", "/dishes?want=2,4", goal, "40").await;
    let result = passed(&run_named);
    assert_eq!(labels(result), ["check \"+\", \"+\"", "click \"Order!\""]);
    replays(&run_named, "dyn-dishes-replay", result.steps.len()).await;
    // By the words of the dishes' icons, as many portions as the goal counts: more than
    // there are vegan dishes, so one dish's "+" is pressed three times.
    let goal = "Order 3 items that are vegan";
    let run_counted = run(
        &site,
        "dyn-dishes-counted",
        "/dishes?kind=vegan&count=3",
        goal,
        "40",
    )
    .await;
    let steps = labels(passed(&run_counted));
    assert!(
        steps.contains(&"click \"+\" 3 times") && steps.len() <= 3,
        "{steps:?}"
    );
    assert_eq!(steps.last(), Some(&"click \"Order!\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_number_the_goal_asks_for_is_counted_on_the_page() {
    // Empty spans, drawn by Math.random: their number is typed, then Submit.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Type the total number of blocks into the textbox and press Submit.";
    let run = run(&site, "dyn-blocks", "/blocks", goal, "20").await;
    let steps = labels(passed(&run));
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert!(steps[0].ends_with("and click \"Submit\""), "{steps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_half_under_another_is_clicked_where_it_shows() {
    // ONE's middle is under TWO: it is clicked on its edge that shows, not skipped as covered.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Click button ONE, then click button TWO.";
    let run = run(&site, "dyn-overlap", "/overlap", goal, "20").await;
    let result = passed(&run);
    assert_eq!(labels(result), ["click \"ONE\"", "click \"TWO\""]);
}

/// The last word of a text area longer than 500 characters is the whole word (the page's
/// values were cut at 500 characters, and "the last word" was the half a word there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_word_of_a_long_text_is_typed_whole() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Find the last word in the text area, enter it into the text field and hit Submit.";
    let run = run(&site, "dyn-last-word", "/last-word", goal, "20").await;
    let steps = labels(passed(&run));
    assert!(steps.iter().any(|s| s.contains("\"zygote\"")), "{steps:?}");
}

/// Fields no <label> names are named by the one short text in the divs around them, before
/// the div that holds the field or after the field (MiniWoB++'s multi-layouts: with nameless
/// fields the values went in by guesswork and the budget ran out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_are_named_by_the_text_of_the_divs_around_them() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Search for fantasy movies directed by Little from year 2012.";
    for (layout, year) in [("field", "Released Date"), ("after", "Year")] {
        let path = format!("/labels?layout={layout}");
        let run = run(&site, &format!("dyn-labels-{layout}"), &path, goal, "30").await;
        let steps = labels(passed(&run));
        // The form is filled whole, each value under its label (one field alone may be tried
        // first: the search's path keeps it).
        let form = steps.last().copied().unwrap_or_default();
        for pair in [
            format!("\"{year}\"=\"2012\""),
            "=\"fantasy\"".to_owned(),
            "=\"Little\"".to_owned(),
        ] {
            assert!(form.contains(&pair), "{layout}: {steps:?}");
        }
        assert!(steps.len() <= 2, "{layout}: {steps:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_holds_several_choices() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Select Fayette, Claudie from the scroll list and click Submit.";
    let run = run(&site, "dyn-multiple", "/multiple", goal, "40").await;
    let result = passed(&run);
    assert_eq!(result.steps.len(), 2, "{:?}", labels(result));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agreement_that_opens_its_form_once_scrolled_to_the_end() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Scroll to the bottom of the textarea, enter the name \"Ada\" then press \"Agree\"";
    let run = run(&site, "dyn-agreement", "/agreement", goal, "60").await;
    let result = passed(&run);
    let steps = labels(result);
    assert!(
        steps
            .first()
            .is_some_and(|s| s.starts_with("scroll ") && s.ends_with(" to the bottom")),
        "{steps:?}"
    );
    assert!(steps.iter().any(|s| s.contains("\"Ada\"")), "{steps:?}");
    // The compiled workflow scrolls again without search.
    replays(&run, "dyn-agreement-replay", result.steps.len()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_of_text_checked_for_where_it_was_scrolled() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Scroll the text to the top and press Submit.";
    let run = run(&site, "dyn-read-to-top", "/read-to-top", goal, "40").await;
    let result = passed(&run);
    assert_eq!(
        labels(result),
        ["scroll \"reading\" to the top", "click \"Submit\""]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_date_picker_stepped_back_to_the_goals_month() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Select 02/14/2016 as the date and hit submit.";
    let run = run(&site, "dyn-datepicker", "/datepicker", goal, "200").await;
    let result = passed(&run);
    let steps = labels(result);
    // May back to February in one action.
    assert!(steps.contains(&"click \"Prev\" 3 times"), "{steps:?}");
    assert_eq!(steps.last(), Some(&"click \"Submit\""), "{steps:?}");
    assert!(steps.contains(&"click \"14\""), "{steps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_roll_of_the_page_dice_is_thrown_again_until_it_shows_what_the_goal_wants() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Roll the die until it shows a six, then press Submit";
    let run = run(&site, "dyn-dice", "/dice", goal, "60").await;
    let result = passed(&run);
    let mut expected = vec!["click \"Roll\""; 5];
    expected.push("click \"Submit\"");
    assert_eq!(labels(result), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_in_the_page_is_asked_for_help_then_told_what_its_help_teaches() {
    // The keys go to a field no one sees and the page reads key presses, not the field's
    // value: typed as text, nothing reaches the shell. Its greeting teaches "help", the help
    // teaches "list" and "erase NAME", the listing gives the name.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Erase the file whose name ends with .log";
    let run = run(&site, "dyn-shell", "/shell", goal, "30").await;
    let result = passed(&run);
    // The field has no name of its own: the terminal is named by its transcript's first line.
    let typed = |command: &str| {
        format!("fill \"Enter 'help' to see the commands.\" with \"{command}\" + Enter")
    };
    assert_eq!(
        labels(result),
        vec![typed("help"), typed("list"), typed("erase build.log")]
    );
    replays(&run, "dyn-shell-replay", 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_whose_board_the_eyes_cannot_read_is_played_out_and_won() {
    // Every move leaves the eyes' value of the board as it was: searched breadth first, 60
    // actions do not reach a third move of X (9 + 9 × 7 before the first). Played out from
    // the board (a random X wins about three games in five against this player), it is won.
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Play X and win the game";
    let run = run(&site, "dyn-game", "/game", goal, "60").await;
    let result = passed(&run);
    assert!(
        result.steps.len() >= 3,
        "three X in a row: {:?}",
        labels(result)
    );
    assert!(
        u64::from(result.metrics.actions) > result.metrics.iterations,
        "playouts ran: {:?}",
        result.metrics
    );
}

/// A CMS admin as it is: a new page's title typed, its rich-text body (`contenteditable`)
/// typed into, and "Publish" reached behind a split button's arrow; the page is live with
/// that body, made once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cms_page_is_published_through_its_rich_text_body_and_split_button() {
    let site = sites::serve(sites::cms()).await;
    let url = site.url("/admin/pages");
    let run = forager(
        "cms-publish",
        &[
            "--url",
            &url,
            "--goal",
            "Publish a new page titled \"Spring fair\" with the text \"Stalls open at nine\"",
            "--success-js",
            "[...document.querySelectorAll('table.listing tbody tr')].some(r => r.querySelector('.title').textContent === 'Spring fair' && r.querySelector('.status').textContent === 'live' && r.querySelector('.body').textContent.includes('Stalls open at nine'))",
            "--risk-ceiling",
            "4",
            "--budget",
            "60",
            "--no-memory",
        ],
    )
    .await;
    run.passed();
}

/// A record's controls known only by their `aria-label` (an icon link) or behind a kebab
/// menu ("More options for 'Old news'"), and a confirmation page after "Delete": the page
/// is deleted, once, and the other one stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cms_page_is_deleted_through_its_kebab_menu_and_confirmation() {
    let site = sites::serve(sites::cms()).await;
    let url = site.url("/admin/pages");
    let edit = forager(
        "cms-edit",
        &[
            "--url",
            &url,
            "--goal",
            "Open the editor of the page \"About us\"",
            "--success-text",
            "Editing About us",
            "--budget",
            "20",
            "--no-memory",
            "--nodes",
            "1",
        ],
    )
    .await;
    edit.passed();
    let reset = format!(
        "python3 -c \"import urllib.request as u; u.urlopen(u.Request('{}', method='POST'))\"",
        site.url("/reset")
    );
    let run = forager(
        "cms-delete",
        &[
            "--url",
            &url,
            "--goal",
            "Delete the page \"Old news\"",
            "--success-js",
            "location.pathname === '/admin/pages' && !document.body.innerText.includes('Old news') && document.body.innerText.includes('About us')",
            "--risk-ceiling",
            "7",
            "--budget",
            "40",
            "--no-memory",
            // One node: with two, the one still searching deleted pages of the live fixture
            // while the other replayed the path after the reset (CI's run: not reproduced
            // twice, "About us" gone). The reproduction is then this node's own replay.
            "--nodes",
            "1",
            // A deleted record's way is gone once it is deleted: a sandbox that resets lets
            // the reproduction replay the whole path, the delete included.
            "--reset-cmd",
            &reset,
        ],
    )
    .await;
    let result = run.passed();
    assert!(
        result
            .steps
            .iter()
            .any(|s| s.label.contains("Yes, delete it")),
        "through the confirmation page: {:?}",
        result.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
    );
    let deletes = site
        .requests()
        .iter()
        .filter(|r| r.starts_with("POST /admin/pages/0/delete"))
        .count();
    assert!(
        (1..=2).contains(&deletes),
        "the finder's delete and the reproduction's, after a reset: {:?}",
        site.requests()
    );
}
