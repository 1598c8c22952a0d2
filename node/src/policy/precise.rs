//! A form filled with what the goal names and nothing else. Real applications' forms have
//! many optional fields (an issue's superseder, its nosy list, a table's search box beside
//! its filter row); typing the goal's spare words into them sends what nobody asked for and
//! the server refuses it or filters by it. Two readings fill a form precisely:
//!
//! - a comparison of the goal ("more than 5 million inhabitants") goes into a filter row:
//!   the operator list takes the comparator, the column list beside it the column the
//!   comparison's words name, the value field the value ([`crate::comparison`]);
//! - on a form of [`PRECISE_MIN_FIELDS`] fields or more, a list takes an option only where the
//!   goal names it ("raise the priority to urgent"), a text field a quoted value only where
//!   the words before the quote name the field ("titled "…"" into "Title") or, for a quote of
//!   several words, the form's one multi-line field ("saying "…"" into the note); every other
//!   field keeps what it holds;
//! - a record the goal names by kind and number ("issue 4") goes into a form of one text
//!   field sent by a control that names the kind ("Show issue:"), where the page does not
//!   show that record already: an application's "go to record" box.

use super::field_kind::{is_list, operator_list, option_value, placeholder, select, typed};
use super::*;
use crate::comparison::{self, Comparison};

/// The fewest fillable fields a form has for the goal's named choices to be filled alone: a
/// short form (a login, a benchmark's three fields) is filled whole by the assignments.
const PRECISE_MIN_FIELDS: usize = 5;

/// The fit of a precise assignment: what the goal names, each where it belongs.
const PRECISE_FIT: f64 = 1.0;

/// The fits of a comparison's filter row with the column list's options it is tried with,
/// best first: the columns after the first are guesses of the words' likeness.
const COLUMN_FITS: [f64; 3] = [PRECISE_FIT, 0.6, 0.4];

/// The same for a name the goal only places things in ("of South America"): which column
/// holds it is a guess from the first, so below a link that carries the name (0.8).
const PLACED_COLUMN_FITS: [f64; 3] = [0.5, 0.35, 0.25];

/// The goal's words that ask to change a value a record holds (verbs: they name no field,
/// even one called "Change Note").
const CHANGE_WORDS: &[&str] = &[
    "change", "rename", "replace", "update", "edit", "set", "correct", "retitle",
];

/// The fewest words of a quoted value that make it a text for a multi-line field.
const NOTE_MIN_WORDS: usize = 4;

/// What the goal names, read once per page for the precise assignments.
pub(super) struct NamedValues {
    comparisons: Vec<Comparison>,
    /// The goal's words that may name an option: not a quoted value's, not the login's ("as
    /// alice"), not an input's value.
    option_words: String,
    /// Whether the goal asks to change a value a record holds ("rename", "change the title"):
    /// only then does a field that holds a value get the goal's text over it.
    changes: bool,
    /// Whether the page is another record than the one the goal names ("issue 2" on
    /// issue3's page): what the goal names is not written into it.
    other_record: bool,
    /// The records the goal names by kind and number that the page does not show
    /// (`("issue", "4")`), for a form that opens a record by its number.
    records_elsewhere: Vec<(String, String)>,
    /// Whether the goal makes something new ("a new bug", "create"): not in the form of a
    /// record that exists.
    creates: bool,
    /// The names of the page's fields that hold a value.
    prefilled: Vec<String>,
    /// The words naming the page itself (its title's, its path's), stemmed: "cities" on a
    /// table of cities names no column.
    page_words: Vec<String>,
}

impl NamedValues {
    pub(super) fn of(
        observation: &Observation,
        task: &TaskContext,
        reading: &GoalReading,
    ) -> NamedValues {
        let path = observation
            .url
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .splitn(4, '/')
            .nth(3)
            .unwrap_or_default();
        let page_words = crate::embed::words(&observation.title)
            .chain(crate::embed::words(path))
            .map(|w| comparison::stem(&w))
            .collect();
        let mut words = task.goal.clone();
        for quoted in &reading.quoted {
            words = words.replace(&quoted.text, " ");
        }
        let login = login_names(&task.goal);
        let kept: Vec<String> = crate::embed::words(&words)
            .filter(|w| !login.contains(w))
            .filter(|w| {
                !task
                    .inputs
                    .iter()
                    .any(|(_, v)| crate::embed::words(v).any(|i| &i == w))
            })
            .collect();
        let changes = crate::embed::words(&task.goal).any(|w| CHANGE_WORDS.contains(&w.as_str()));
        let prefilled = observation
            .values
            .iter()
            .filter(|v| v.kind == PageValueKind::Field && !v.value.trim().is_empty())
            .map(|v| v.label.clone())
            .collect();
        let creates = crate::embed::words(&task.goal)
            .any(|w| ["new", "create", "creates", "register", "file"].contains(&w.as_str()));
        NamedValues {
            creates,
            other_record: other_record(&task.goal, &observation.url, &observation.title),
            records_elsewhere: if login.is_empty() || !asks_to_log_in(observation) {
                named_records(&task.goal)
                    .into_iter()
                    .filter(|(kind, number)| {
                        shown_records(&observation.url, &observation.title, kind).1
                            != [number.as_str()]
                    })
                    .collect()
            } else {
                // The goal logs in first ("log in as alice and …"), and the page can: a
                // record opened before is the one the anonymous may see, without its form.
                Vec::new()
            },
            changes,
            prefilled,
            comparisons: comparison::comparisons(&task.goal),
            option_words: kept.join(" "),
            page_words,
        }
    }
}

/// Whether the page shows another record than one the goal names by kind and number
/// ("issue 2", "order #1234"): its address or title names the same kind with another number
/// ("/tracker/issue3", "issue3: Search is slow") or with none (the form of a new issue).
fn other_record(goal: &str, url: &str, title: &str) -> bool {
    named_records(goal).iter().any(|(kind, number)| {
        let (names_kind, numbers) = shown_records(url, title, kind);
        (names_kind || !numbers.is_empty()) && !numbers.contains(number)
    })
}

/// The records the goal names by kind and number: a word of three letters or more, then a
/// number ("issue 2", "order #1234").
fn named_records(goal: &str) -> Vec<(String, String)> {
    let words: Vec<String> = crate::embed::words(goal).collect();
    words
        .windows(2)
        .filter(|w| {
            w[0].chars().all(|c| c.is_ascii_alphabetic())
                && w[0].len() >= 3
                && w[1].chars().all(|c| c.is_ascii_digit())
        })
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect()
}

/// The page's records of `kind`, by its address and title ("issue3", or "issue" then "3"):
/// whether it names the kind alone (a new issue's form is none of them), and the numbers.
fn shown_records(url: &str, title: &str, kind: &str) -> (bool, Vec<String>) {
    let path = url.split(['?', '#']).next().unwrap_or(url).to_lowercase();
    let shown = format!("{path} {}", title.to_lowercase());
    let shown_words: Vec<String> = crate::embed::words(&shown).collect();
    let mut names_kind = false;
    let numbers = shown_words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w.strip_prefix(kind) {
            Some("") => {
                names_kind = true;
                shown_words
                    .get(i + 1)
                    .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
                    .cloned()
            }
            Some(rest) if rest.chars().all(|c| c.is_ascii_digit()) => Some(rest.to_owned()),
            _ => None,
        })
        .collect();
    (names_kind, numbers)
}

/// Whether the page holds a password field (a login form).
fn asks_to_log_in(observation: &Observation) -> bool {
    observation
        .elements
        .iter()
        .any(|e| e.input_type.eq_ignore_ascii_case("password"))
}

/// A form that opens a record by its number ("Show issue:" beside one text field), given
/// the number of a record of that kind the goal names and the page does not show.
fn record_lookup(fields: &[&Element], named: &NamedValues) -> Option<Vec<FieldValue>> {
    let [field] = fields else {
        return None;
    };
    if !is_text_field(field) || field.input_type.eq_ignore_ascii_case("password") {
        return None;
    }
    // The control that sends it names the kind (a form's own name is often its action's
    // path, which a search box of the same list shares).
    let sender = field.form.as_ref()?.submit_name.as_deref()?;
    let sender: Vec<String> = crate::embed::words(sender).collect();
    let (_, number) = named
        .records_elsewhere
        .iter()
        .find(|(kind, _)| sender.iter().any(|w| w == kind))?;
    Some(vec![typed(field, number.clone())])
}

/// The names after "log in as" and its kin: who signs in, not a value of the form.
fn login_names(goal: &str) -> Vec<String> {
    let words: Vec<String> = crate::embed::words(goal).collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if w == "as"
            && i >= 1
            && (matches!(words[i - 1].as_str(), "login" | "signed" | "logged")
                || (words[i - 1] == "in"
                    && i >= 2
                    && matches!(words[i - 2].as_str(), "log" | "sign" | "logged" | "signed")))
            && let Some(name) = words.get(i + 1)
        {
            out.push(name.clone());
        }
    }
    out
}

impl<E: Embedder> DefaultPolicy<E> {
    /// The precise assignments of one form's fields (in the page's order), each with its fit.
    pub(super) fn precise_assignments(
        &self,
        fields: &[&Element],
        named: &NamedValues,
        reading: &GoalReading,
    ) -> Vec<(Vec<FieldValue>, f64)> {
        let mut out = self.filter_rows(fields, named);
        if let Some(lookup) = record_lookup(fields, named) {
            out.push((lookup, PRECISE_FIT));
        }
        if fields.len() >= PRECISE_MIN_FIELDS
            && !named.other_record
            && let Some(assignment) = named_fields(fields, named, reading)
        {
            out.push((assignment, PRECISE_FIT));
        }
        out
    }

    /// A comparison per filter row (an operator list, the column list before it, the value
    /// field after it): one assignment per column tried.
    fn filter_rows(&self, fields: &[&Element], named: &NamedValues) -> Vec<(Vec<FieldValue>, f64)> {
        let operators: Vec<usize> = (0..fields.len())
            .filter(|&i| is_list(fields[i]) && operator_list(fields[i]))
            .collect();
        let mut out = Vec::new();
        for (&at, wanted) in operators.iter().zip(&named.comparisons) {
            let operator = fields[at];
            let Some(option) = operator.options.iter().find(|o| {
                comparison::option_comparator(&o.label, &o.value) == Some(wanted.comparator)
            }) else {
                continue;
            };
            let column = (0..at)
                .rev()
                .chain(at + 1..fields.len())
                .map(|i| fields[i])
                .find(|f| is_list(f) && !operator_list(f));
            let Some(value_field) = fields[at + 1..]
                .iter()
                .chain(fields[..at].iter().rev())
                .find(|f| is_text_field(f) && !is_search_box(f))
            else {
                continue;
            };
            let row = vec![
                select(operator, option_value(option)),
                typed(value_field, wanted.value.clone()),
            ];
            let Some(column) = column else {
                out.push((row, PRECISE_FIT));
                continue;
            };
            // The form's other lists the goal names ("sorted by population").
            let others = fields
                .iter()
                .filter(|f| is_list(f) && !operator_list(f) && !std::ptr::eq(**f, column));
            let row: Vec<FieldValue> = row
                .into_iter()
                .chain(others.filter_map(|list| named_option(list, &named.option_words)))
                .collect();
            let fits = if wanted.placed {
                PLACED_COLUMN_FITS
            } else {
                COLUMN_FITS
            };
            let columns = self.columns(column, wanted, named);
            for (choice, fit) in columns.into_iter().zip(fits) {
                let mut assignment = vec![select(column, choice)];
                assignment.extend(row.iter().cloned());
                out.push((assignment, fit));
            }
        }
        out
    }

    /// A column list's options for a comparison, best first: one whose words are the
    /// comparison's ("names" for `name`), else the most alike to its words ("inhabitants"
    /// for `population`); the words that name the page itself aside ("cities").
    fn columns(&self, column: &Element, wanted: &Comparison, named: &NamedValues) -> Vec<String> {
        let mut words: Vec<&String> = wanted
            .subject
            .iter()
            .filter(|w| !named.page_words.contains(&comparison::stem(w)))
            .collect();
        if words.is_empty() {
            words = wanted.subject.iter().collect();
        }
        let subject: Vec<String> = words.iter().map(|w| comparison::stem(w)).collect();
        let text: Vec<&str> = words.iter().map(|w| w.as_str()).collect();
        let subject_vector = self.embedder.embed(&text.join(" "));
        let mut ranked: Vec<(f64, String)> = column
            .options
            .iter()
            .filter(|o| !placeholder(o))
            .map(|o| {
                let readable = o.label.replace(['_', '-'], " ");
                let named =
                    crate::embed::words(&readable).any(|w| subject.contains(&comparison::stem(&w)));
                let score = if named {
                    super::fill::NAMED_OPTION_SCORE
                } else {
                    // As a control's likeness: weak n-gram matches squared below the model's.
                    let lexical = self.similarity(&subject_vector, &readable);
                    (lexical * lexical).max(self.semantic(&text.join(" "), &readable))
                };
                (score, option_value(o))
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        ranked
            .into_iter()
            .take(COLUMN_FITS.len())
            .map(|(_, value)| value)
            .collect()
    }
}

/// The lists whose option the goal names and the text fields a quoted value belongs in;
/// `None` where the goal names nothing of this form.
fn named_fields(
    fields: &[&Element],
    named: &NamedValues,
    reading: &GoalReading,
) -> Option<Vec<FieldValue>> {
    let held = |f: &Element| named.prefilled.contains(&f.name);
    // A goal that makes something new ("report a new bug") is not carried out in the form of
    // a record that exists (an issue's fields, filled in).
    if named.creates && fields.iter().any(|f| held(f)) {
        return None;
    }
    let mut assignment = Vec::new();
    assignment.extend(
        fields
            .iter()
            .filter(|f| is_list(f) && !operator_list(f))
            .filter_map(|list| named_option(list, &named.option_words)),
    );
    let text_fields: Vec<&Element> = fields
        .iter()
        .copied()
        .filter(|f| is_text_field(f) || f.tag == "textarea")
        .collect();
    let notes: Vec<usize> = (0..text_fields.len())
        .filter(|&i| text_fields[i].tag == "textarea")
        .collect();
    // The text fields the goal's own words name ("the title"), outside its quotes.
    let goal_words: Vec<String> = crate::embed::words(&named.option_words)
        .filter(|w| !CHANGE_WORDS.contains(&w.as_str()))
        .collect();
    let named_by_goal: Vec<usize> = (0..text_fields.len())
        .filter(|&i| {
            crate::embed::words(&text_fields[i].name)
                .any(|w| w.len() >= 4 && goal_words.iter().any(|g| names_field(g, &w)))
        })
        .collect();
    let mut used: Vec<usize> = Vec::new();
    for quoted in &reading.quoted {
        let context: Vec<String> = crate::embed::words(&quoted.context).collect();
        let by_name = text_fields.iter().position(|f| {
            crate::embed::words(&format!("{} {}", f.name, f.nearby_text))
                .any(|w| w.len() >= 4 && context.iter().any(|c| names_field(c, &w)))
        });
        let long = quoted.text.split_whitespace().count() >= NOTE_MIN_WORDS;
        // The field the words before the quote name takes it; else the one field the goal
        // names ("change the title of issue 1 to …"); else, where the goal names none, the
        // form's one multi-line field takes a long quote (a comment "saying …").
        let at = match (by_name, &named_by_goal[..], &notes[..]) {
            (Some(at), _, _) => Some(at),
            (None, [one], _) => Some(*one),
            (None, [], [only]) if long => Some(*only),
            _ => None,
        };
        // A record's field that holds a value keeps it unless the goal asks to change one.
        let Some(at) = at.filter(|&at| named.changes || !held(text_fields[at])) else {
            continue;
        };
        if !used.contains(&at) {
            used.push(at);
            assignment.push(typed(text_fields[at], reading.cased(&quoted.text)));
        }
    }
    (!assignment.is_empty()).then_some(assignment)
}

/// The choice of a list whose option the goal names, word for word ("urgent"; "Sort by
/// population" for "sorted by population": a word of four letters or more names those it
/// begins or that begin it); the option naming most words where several do, none on a tie.
fn named_option(list: &Element, goal_words: &str) -> Option<FieldValue> {
    let goal: Vec<String> = crate::embed::words(goal_words).collect();
    let mut best: Option<(usize, &forager_protocol::observation::SelectOption)> = None;
    let mut tie = false;
    for option in list.options.iter().filter(|o| !placeholder(o)) {
        let label: Vec<String> = crate::embed::words(&option.label).collect();
        let named = !label.is_empty()
            && goal.windows(label.len()).any(|window| {
                window
                    .iter()
                    .zip(&label)
                    .all(|(g, l)| g == l || names_field(g, l))
            });
        if !named {
            continue;
        }
        match best {
            Some((n, _)) if n > label.len() => {}
            Some((n, _)) if n == label.len() => tie = true,
            _ => {
                best = Some((label.len(), option));
                tie = false;
            }
        }
    }
    let (_, option) = best.filter(|_| !tie)?;
    Some(select(
        list,
        named_option_value(&list.options, option, &goal),
    ))
}

/// An option the goal named, chosen by its label where the goal says the label itself
/// ("urgent", not Roundup's value "2": a remembered workflow then knows the goal's word for
/// the value), unless another option's value reads the same; else as [`option_value`].
fn named_option_value(
    options: &[forager_protocol::observation::SelectOption],
    option: &forager_protocol::observation::SelectOption,
    goal: &[String],
) -> String {
    let label = option.label.trim();
    let words: Vec<String> = crate::embed::words(label).collect();
    let said = !words.is_empty() && goal.windows(words.len()).any(|w| w == words.as_slice());
    let clashes = options
        .iter()
        .any(|o| !std::ptr::eq(o, option) && o.value.trim().eq_ignore_ascii_case(label));
    if said && !clashes {
        label.to_owned()
    } else {
        option_value(option)
    }
}

/// Whether a word before a quote names a field's word: one begins the other, four letters at
/// least ("titled" names "Title").
fn names_field(context_word: &str, field_word: &str) -> bool {
    context_word.len() >= 4
        && (context_word.starts_with(field_word) || field_word.starts_with(context_word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::Locator;
    use forager_protocol::observation::{FormContext, PageValue, SelectOption};

    fn form(posts: bool, submit: &str) -> Option<FormContext> {
        Some(FormContext {
            name: String::new(),
            submit_name: Some(submit.into()),
            posts,
            selector: "#form".into(),
            implicit: false,
        })
    }

    fn field(name: &str, role: &str, tag: &str, options: &[(&str, &str)]) -> Element {
        let mut e = crate::testing::control(role, name, "");
        e.tag = tag.into();
        e.input_type = if tag == "input" {
            "text".into()
        } else {
            String::new()
        };
        e.locators = vec![Locator::Css(format!("[name='{name}']"))];
        e.options = options
            .iter()
            .map(|(label, value)| SelectOption {
                label: (*label).into(),
                value: (*value).into(),
            })
            .collect();
        e
    }

    /// What the page's fields hold, by their names.
    fn held_values(held: &[(&str, &str)]) -> Vec<PageValue> {
        held.iter()
            .map(|(label, value)| PageValue {
                changed: false,
                label: (*label).into(),
                value: (*value).into(),
                kind: PageValueKind::Field,
            })
            .collect()
    }

    use crate::policy::tests::task;

    /// The form fills proposed for `goal` on a page of `fields` (all in one form sent by
    /// `submit`), best first: each as (field name, value) pairs.
    fn fills(
        fields: Vec<Element>,
        held: &[(&str, &str)],
        posts: bool,
        submit: &str,
        goal: &str,
        inputs: &[(&str, &str)],
    ) -> Vec<Vec<(String, String)>> {
        let mut elements: Vec<Element> = fields
            .into_iter()
            .map(|mut f| {
                f.form = form(posts, submit);
                f
            })
            .collect();
        let mut button = crate::testing::control("button", submit, "");
        button.tag = "button".into();
        button.form = form(posts, submit);
        elements.push(button);
        let mut observation = crate::testing::page("http://127.0.0.1:1/table", elements);
        observation.values = held_values(held);
        let task = task(goal, inputs);
        let mut candidates = DefaultPolicy::default()
            .propose(&observation, &task)
            .candidates;
        candidates.sort_by(|a, b| b.prior.total_cmp(&a.prior));
        candidates
            .into_iter()
            .filter_map(|c| match c.action {
                Action::FillForm { fields, .. } => Some(
                    fields
                        .into_iter()
                        .map(|f| {
                            let value = match f.value {
                                FillValue::Literal(text) => text,
                                FillValue::Input(name) => format!("<{name}>"),
                            };
                            (f.target.name, value)
                        })
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    /// A data browser's table form: a search box, a filter row, a sort list.
    fn filter_form() -> Vec<Element> {
        let mut search = field("Search:", "searchbox", "input", &[]);
        search.input_type = "search".into();
        vec![
            search,
            field(
                "_filter_column",
                "combobox",
                "select",
                &[
                    ("- column -", ""),
                    ("id", "id"),
                    ("name", "name"),
                    ("country_code", "country_code"),
                    ("population", "population"),
                    ("description", "description"),
                ],
            ),
            field(
                "_filter_op",
                "combobox",
                "select",
                &[
                    ("=", "exact"),
                    ("!=", "not"),
                    ("contains", "contains"),
                    ("ends with", "endswith"),
                    ("starts with", "startswith"),
                    (">", "gt"),
                    ("≥", "gte"),
                    ("<", "lt"),
                ],
            ),
            field("_filter_value", "textbox", "input", &[]),
            field(
                "_sort",
                "combobox",
                "select",
                &[
                    ("Sort...", ""),
                    ("Sort by id", "id"),
                    ("Sort by name", "name"),
                ],
            ),
        ]
    }

    #[test]
    fn a_comparison_fills_the_filter_row_and_nothing_else() {
        let proposed = fills(
            filter_form(),
            &[],
            false,
            "Apply",
            "List the cities whose names start with \"San\"",
            &[],
        );
        let best = &proposed[0];
        assert_eq!(
            best,
            &pairs(&[
                ("_filter_column", "name"),
                ("_filter_op", "startswith"),
                ("_filter_value", "San")
            ]),
            "{proposed:?}"
        );
        let proposed = fills(
            filter_form(),
            &[],
            false,
            "Apply",
            "Show the cities with more than 5 million inhabitants",
            &[],
        );
        assert!(
            proposed
                .iter()
                .any(|f| f.contains(&("_filter_op".into(), "gt".into()))
                    && f.contains(&("_filter_value".into(), "5000000".into()))
                    && !f.iter().any(|(name, _)| name == "Search:")),
            "{proposed:?}"
        );
    }

    #[test]
    fn a_placed_name_fills_a_row_and_the_sort_the_goal_names() {
        let mut form = filter_form();
        form[4] = field(
            "_sort",
            "combobox",
            "select",
            &[
                ("Sort...", ""),
                ("Sort by name", "name"),
                ("Sort by population", "population"),
            ],
        );
        let proposed = fills(
            form,
            &[],
            false,
            "Apply",
            "Show me the countries of South America, sorted by population",
            &[],
        );
        assert!(
            proposed
                .iter()
                .any(|f| f.contains(&("_filter_op".into(), "exact".into()))
                    && f.contains(&("_filter_value".into(), "South America".into()))
                    && f.contains(&("_sort".into(), "population".into()))),
            "{proposed:?}"
        );
    }

    /// An issue's edit form: a title, lists, optional text fields, a note.
    fn issue_form() -> Vec<Element> {
        let mut title = field("Title", "textbox", "input", &[]);
        title.nearby_text = "Title".into();
        vec![
            title,
            field(
                "priority",
                "combobox",
                "select",
                &[
                    ("- no selection -", "-1"),
                    ("critical", "1"),
                    ("urgent", "2"),
                    ("bug", "3"),
                ],
            ),
            field(
                "status",
                "combobox",
                "select",
                &[
                    ("- no selection -", "-1"),
                    ("unread", "1"),
                    ("chatting", "3"),
                    ("resolved", "8"),
                ],
            ),
            field("superseder", "textbox", "input", &[]),
            field("nosy", "textbox", "input", &[]),
            field(
                "assignedto",
                "combobox",
                "select",
                &[
                    ("- no selection -", "-1"),
                    ("admin", "1"),
                    ("alice", "3"),
                    ("bob", "4"),
                ],
            ),
            field("Change Note", "textbox", "textarea", &[]),
        ]
    }

    #[test]
    fn a_big_form_gets_only_what_the_goal_names() {
        let login = [("username", "alice"), ("password", "tulip garden 42")];
        let has = |goal: &str, inputs: &[(&str, &str)], expected: &[(&str, &str)]| {
            let proposed = fills(issue_form(), &[], true, "Submit Changes", goal, inputs);
            assert!(proposed.contains(&pairs(expected)), "{goal}: {proposed:?}");
        };
        has(
            "Log in as alice and raise the priority of issue 3 to urgent",
            &login,
            &[("priority", "urgent")],
        );
        // Without the credentials too (a capsule): "as alice" names who logs in.
        has(
            "Log in as alice and mark issue 2 as resolved",
            &[],
            &[("status", "resolved")],
        );
        has(
            "Log in as alice and add a comment to issue 1 saying \"I can reproduce this on Firefox too\"",
            &login,
            &[("Change Note", "I can reproduce this on Firefox too")],
        );
        has(
            "Log in as alice and report a new bug titled \"Export button does nothing\"",
            &login,
            &[("priority", "bug"), ("Title", "Export button does nothing")],
        );
    }

    #[test]
    fn the_login_names_who_signs_in() {
        assert_eq!(
            login_names("Log in as alice and mark issue 2"),
            vec!["alice"]
        );
        assert_eq!(login_names("sign in as Bob, then"), vec!["bob"]);
        assert!(login_names("Show the issues assigned to alice").is_empty());
    }

    /// What `named_fields` gives the issue form for `goal`, with `held` fields holding values.
    fn named(held: &[(&str, &str)], goal: &str) -> Option<Vec<(String, String)>> {
        let fields = issue_form();
        let refs: Vec<&Element> = fields.iter().collect();
        let mut observation = crate::testing::page("http://127.0.0.1:1/tracker/issue1", vec![]);
        observation.values = held_values(held);
        let task = task(goal, &[]);
        let reading = GoalReading::of(goal);
        let values = NamedValues::of(&observation, &task, &reading);
        named_fields(&refs, &values, &reading).map(|assignment| {
            assignment
                .into_iter()
                .map(|f| match f.value {
                    FillValue::Literal(text) => (f.target.name, text),
                    FillValue::Input(name) => (f.target.name, name),
                })
                .collect()
        })
    }

    #[test]
    fn a_record_that_exists_keeps_its_values_unless_the_goal_changes_them() {
        let title = [("Title", "Search is slow")];
        // A new bug is neither the existing issue renamed, nor commented on, nor re-prioritised.
        let new_bug = "Log in as alice and report a new bug titled \"Export button does nothing\"";
        assert_eq!(named(&title, new_bug), None);
        // On an empty form (the new issue's), the title and the priority it names.
        assert_eq!(
            named(&[], new_bug),
            Some(pairs(&[
                ("priority", "bug"),
                ("Title", "Export button does nothing")
            ]))
        );
        // A comment on an issue goes into its note, its title kept.
        let comment =
            "Log in as alice and add a comment to issue 1 saying \"I can reproduce this\"";
        assert_eq!(
            named(&title, comment),
            Some(pairs(&[("Change Note", "I can reproduce this")]))
        );
        // A title the goal changes is typed over.
        let rename = "Change the title of issue 1 to \"Crash on an empty password\"";
        assert_eq!(
            named(&title, rename),
            Some(pairs(&[("Title", "Crash on an empty password")]))
        );
        let retitle = "Rename issue 1, titled \"Crash on an empty password\"";
        assert_eq!(
            named(&title, retitle),
            Some(pairs(&[("Title", "Crash on an empty password")]))
        );
    }

    #[test]
    fn a_record_the_goal_names_goes_into_the_box_that_opens_records_of_its_kind() {
        let goal = "Log in as bob and set the status of issue 4 to deferred";
        // An issue list: links, and a box that opens an issue by its number.
        let top_with = |submit: &str, goal: &str, more: Vec<Element>| {
            let mut number = field("@number", "textbox", "input", &[]);
            number.form = form(false, submit);
            // Roundup's list forms are named by their action's path: "issue".
            if let Some(f) = &mut number.form {
                f.name = "issue".into();
            }
            let mut button = crate::testing::control("button", submit, "");
            button.tag = "button".into();
            button.form = number.form.clone();
            let mut elements = vec![number, button];
            elements.extend(more);
            for name in [
                "Create New",
                "Your Issues",
                "Login page crashes on empty password",
            ] {
                elements.push(crate::testing::control("link", name, ""));
            }
            let observation = crate::testing::page("http://127.0.0.1:1/tracker/", elements);
            let mut candidates = DefaultPolicy::default()
                .propose(&observation, &task(goal, &[]))
                .candidates;
            candidates.sort_by(|a, b| b.prior.total_cmp(&a.prior));
            // The top candidate, and whether this rule made it (its why's signal).
            candidates
                .first()
                .map(|c| {
                    let rule = c.why.0.iter().any(|(name, _)| *name == "goal_names_fields");
                    format!("{}{}", c.action.label(), if rule { " (named)" } else { "" })
                })
                .unwrap_or_default()
        };
        let top = |submit: &str, goal: &str| top_with(submit, goal, Vec::new());
        assert_eq!(
            top("Show issue:", goal),
            r#"fill "@number"="4" and click "Show issue:" (named)"#
        );
        // A box sent by a control that names another kind is no way to the issue (the
        // form's name, its action's path, says nothing: the list's search box shares it).
        assert!(!top("Show user:", goal).contains("(named)"));
        assert!(!top("Search", goal).contains("(named)"));
        // The goal logs in first, and the page has the login form: not opened logged out.
        let mut password = field("__login_password", "textbox", "input", &[]);
        password.input_type = "password".into();
        let logged_out = top_with("Show issue:", goal, vec![password]);
        assert!(!logged_out.contains("(named)"), "{logged_out}");
        // Nor is it the way where the goal names no record.
        assert!(!top("Show issue:", "Show me the open issues").contains("(named)"));
        // On the record's own page it is not opened again.
        let named = |url: &str| {
            let observation = crate::testing::page(url, Vec::new());
            NamedValues::of(&observation, &task(goal, &[]), &GoalReading::default())
                .records_elsewhere
        };
        assert_eq!(
            named("http://h/tracker/issue4"),
            Vec::<(String, String)>::new()
        );
        assert_eq!(
            named("http://h/tracker/issue3"),
            vec![("issue".into(), "4".into())]
        );
    }

    #[test]
    fn another_record_than_the_goal_names_is_not_written() {
        let goal = "Log in as alice and mark issue 2 as resolved";
        assert!(other_record(
            goal,
            "http://h/tracker/issue3",
            "issue3: Search is slow"
        ));
        assert!(!other_record(
            goal,
            "http://h/tracker/issue2?@ok=1",
            "issue2: Typo"
        ));
        assert!(other_record(
            "close order #1234",
            "http://h/orders/1235",
            "Order 1235"
        ));
        assert!(!other_record(
            "close order #1234",
            "http://h/orders/1234/edit",
            ""
        ));
        // No record named, or a page of no record: nothing to tell.
        assert!(!other_record(
            "report a new bug",
            "http://h/tracker/issue3",
            ""
        ));
        // A new issue's form is not issue 2; a page that does not name the kind says nothing.
        assert!(other_record(
            goal,
            "http://h/tracker/issue?@template=item",
            "New Issue"
        ));
        assert!(!other_record(
            goal,
            "http://h/tracker/",
            "Forager test tracker"
        ));
        let proposed = fills(issue_form(), &[], true, "Submit Changes", goal, &[]);
        assert!(
            proposed.contains(&pairs(&[("status", "resolved")])),
            "{proposed:?}"
        );
    }

    #[test]
    fn placeholders_are_no_choice() {
        let option = |label: &str, value: &str| SelectOption {
            label: label.into(),
            value: value.into(),
        };
        assert!(placeholder(&option("- column -", "")));
        assert!(placeholder(&option("Sort...", "")));
        assert!(placeholder(&option("- no selection -", "-1")));
        assert!(!placeholder(&option("population", "")));
        assert!(!placeholder(&option("urgent", "2")));
    }
}
