//! The goal's plan against one page ([`forager_protocol::plan::Plan`]): which of its
//! conditions the page evidences, which field of the page each unmet one names, and how a
//! candidate moves them.
//!
//! - **Evidence** of a condition, in [0, 1], from what a page shows of its state: the URL's
//!   query (`population__gt=100000000`, `continent=Asia`), the rows of its tables (every row
//!   listed satisfies it, in the column its words name or, where the goal names no field, in
//!   some column), and for a record the goal makes or changes, the values the page *served*
//!   (a list's chosen option, a term and its definition, the title), not those typed since.
//!   The page's value takes the share of conditions evidenced (`plan_conditions`).
//! - **Resolution** of an unmet condition: the page's column (a table header, a column list's
//!   option) its field words name (by word, by a synonym, or by the sentence model's
//!   likeness), or, for a value without a field ("Asian countries"), the column whose cells
//!   hold the value; with the spelling the page uses ("Asia" for "Asian", the key "PE" beside
//!   the label "Peru").
//! - **Lifts**: a link whose address adds an unmet condition to the query (a facet) or orders
//!   as the plan asks is lifted, one that drops a met condition is held back; a form filled so
//!   that its fields hold unmet conditions is lifted by how many, one that would send without a
//!   met condition is held back; a filter row is filled for each unmet condition the page can
//!   resolve, in an empty row, leaving the rows that hold met ones as they are.
//!
//! Every lift names the condition it serves (`Why` and the step's `serves`). Nothing here
//! reads page text as instructions: page text is matched against the goal's values only.

use super::*;
use forager_protocol::plan::{Act, Condition, Operator, Plan, Record};

/// What a link that adds one unmet condition gains: about a goal word's naming.
pub(super) const PLAN_LINK_LIFT: f64 = 0.5;

/// What a form filled with one more unmet condition gains.
pub(super) const PLAN_FILL_LIFT: f64 = 0.6;

/// The factor of a candidate that undoes a met condition (per condition undone).
pub(super) const PLAN_UNDO_FACTOR: f64 = 0.3;

/// What a condition counts for when the page shows it by its value only, not under the field
/// the goal names (a query key, a column header that is another's).
const UNNAMED_FIELD_CREDIT: f64 = 0.6;

/// The least likeness (sentence model) of a field's words to a column's name for the column
/// to be the field's.
const COLUMN_LIKENESS: f64 = 0.45;

/// Words that name one field, for matching a goal's field words to a page's column or key.
const SYNONYMS: &[&[&str]] = &[
    &["population", "people", "inhabitant", "resident", "pop"],
    &["keyword", "tag", "label", "topic", "tagged"],
    &[
        "author", "creator", "writer", "poster", "owner", "user", "by",
    ],
    &[
        "assigned",
        "assignee",
        "assignedto",
        "assign",
        "owner",
        "responsible",
    ],
    &["title", "subject", "summary", "headline", "heading"],
    &[
        "text",
        "message",
        "comment",
        "body",
        "content",
        "note",
        "description",
        "change",
    ],
    &["status", "state", "stage"],
    &[
        "year",
        "date",
        "published",
        "came",
        "released",
        "release",
        "publication",
    ],
    &["price", "cost", "amount"],
    &["category", "section", "genre", "type", "kind", "class"],
    &["priority", "urgency", "importance", "severity"],
    &["language", "lang", "written", "tongue"],
    &["country", "nation", "country_code"],
];

/// A page's words for a field: split on anything but letters and digits, stemmed.
fn field_words_of(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| forager_protocol::comparison::stem(&w.to_lowercase()))
        .collect()
}

/// Whether a page's field name (a column header, a query key, a list's name) is the field the
/// goal's words name.
pub(super) fn names_field(goal_field: &[String], page_name: &str) -> bool {
    if goal_field.is_empty() {
        return false;
    }
    let page: Vec<String> = field_words_of(page_name);
    let whole = page_name.to_lowercase().replace(['_', '-', ' '], "");
    goal_field.iter().any(|g| {
        let g = forager_protocol::comparison::stem(g);
        page.iter().any(|p| {
            *p == g
                || p.len() >= 4 && g.len() >= 4 && (p.starts_with(&g) || g.starts_with(p.as_str()))
                || SYNONYMS
                    .iter()
                    .any(|group| group.contains(&p.as_str()) && group.contains(&g.as_str()))
        }) || g.len() >= 4 && whole.starts_with(&g)
    })
}

/// What of a plan one page shows, and what its unmet conditions name there.
pub(super) struct PlanPage {
    pub(super) plan: Plan,
    /// Each condition's evidence, in the plan's order.
    pub(super) met: Vec<f64>,
    /// How far the page is the record the act is on (its page open), where the act is on one.
    pub(super) record: Option<f64>,
    /// Each condition resolved to a column of this page, with the spelling the page uses.
    pub(super) resolved: Vec<Option<Resolved>>,
    /// Whether the plan's login holds here: 0 on a page that asks for a password, 1 on one
    /// that offers to log out; `None` where the plan needs none or the page says neither.
    pub(super) login: Option<f64>,
    /// The query pairs of the page's URL.
    query: Vec<(String, String)>,
    path: String,
}

/// A condition's field and value as one page writes them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Resolved {
    /// The column's name (a table header, or a column list's option label).
    pub(super) column: String,
    /// The value as the page writes it, best first ("Asia" for "Asian"; "PE" beside "Peru").
    pub(super) spellings: Vec<String>,
}

/// Whether a condition is met on a page: evidenced at half or more.
const MET: f64 = 0.5;

impl PlanPage {
    /// Reads the plan against one page; `likeness` is the sentence model's (or n-grams')
    /// similarity of two short texts, for a field the goal names in other words.
    pub(super) fn of(
        observation: &Observation,
        plan: Plan,
        likeness: &dyn Fn(&str, &str) -> f64,
    ) -> PlanPage {
        let parsed = url::Url::parse(&observation.url).ok();
        let query: Vec<(String, String)> = parsed
            .as_ref()
            .map(|u| {
                u.query_pairs()
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let path = parsed
            .as_ref()
            .map_or(String::new(), |u| u.path().to_owned());
        let met = plan
            .conditions
            .iter()
            .map(|c| evidence(c, plan.act, observation, &query))
            .collect();
        let resolved = plan
            .conditions
            .iter()
            .map(|c| resolve(c, observation, likeness))
            .collect();
        let record = record_shown(&plan, observation);
        let login = plan
            .needs_login()
            .then(|| login_shown(observation))
            .flatten();
        PlanPage {
            plan,
            met,
            record,
            resolved,
            login,
            query,
            path,
        }
    }

    /// The page's value part: the share of the plan's conditions it evidences (and whether
    /// it is the record's page, where the act is on one); `None` where the plan states none.
    pub(super) fn share(&self) -> Option<f64> {
        // A plan that writes states what the write will make ("a group named editors"): no
        // page shows it before the write, so until one shows a condition met or the record,
        // the share says nothing; counted from the start it held every page near one value
        // and the admin's add form was never filled.
        let shows_any = self.met.iter().any(|m| *m >= MET) || self.record.is_some_and(|r| r >= MET);
        if self.plan.act.writes() && !shows_any {
            return None;
        }
        let mut parts: Vec<f64> = self.met.clone();
        parts.extend(self.record);
        if parts.is_empty() {
            return None;
        }
        parts.extend(self.login);
        Some(parts.iter().sum::<f64>() / parts.len() as f64)
    }

    /// The conditions not met on this page, with their index.
    pub(super) fn unmet(&self) -> impl Iterator<Item = (usize, &Condition)> {
        self.plan
            .conditions
            .iter()
            .enumerate()
            .filter(|(i, _)| self.met[*i] < MET)
    }

    /// Whether a link opens the plan's record from a listing: a link of the row (item) that
    /// carries the record's number, name or most of its described words, whose own name
    /// carries one of them or whose address lies below this page. Not where this page is the
    /// record already.
    pub(super) fn opens_record(&self, element: &Element, page_url: &str) -> bool {
        let Some(record) = &self.plan.record else {
            return false;
        };
        if element.role != "link" || self.record.is_none_or(|shown| shown >= MET) {
            return false;
        }
        let Some(href) = element.href.as_deref() else {
            return false;
        };
        let here = page_url
            .split(['?', '#'])
            .next()
            .unwrap_or(page_url)
            .trim_end_matches('/');
        let below = href
            .strip_prefix(here)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with(['?', '#']));
        let stems = |text: &str| -> Vec<String> {
            crate::embed::words(text)
                .map(|w| forager_protocol::comparison::stem(&w))
                .collect()
        };
        let (item, own) = (
            stems(&format!("{} {}", element.record, element.name)),
            stems(&element.name),
        );
        match record {
            Record::Number { number, .. } => {
                own.contains(number)
                    || href.trim_end_matches('/').ends_with(number.as_str())
                        && item.contains(number)
            }
            Record::Name { name } => {
                let name = stems(name);
                !name.is_empty()
                    && name.iter().all(|w| item.contains(w))
                    && (below || name.iter().any(|w| own.contains(w)))
            }
            Record::Described { words } => {
                let wanted: Vec<String> = words
                    .iter()
                    .map(|w| forager_protocol::comparison::stem(w))
                    .collect();
                let in_item = wanted.iter().filter(|w| item.contains(w)).count();
                in_item >= wanted.len().div_ceil(2).max(1)
                    && (below || wanted.iter().any(|w| own.contains(w)))
            }
        }
    }

    /// The record's words a search box may take, most telling first (the last of a
    /// description: "whale" of "hunting a whale"), where the act is on one described record
    /// that the page does not show yet.
    pub(super) fn search_words(&self) -> Vec<String> {
        let mut words = self.record_search_words();
        // A text the goal says a record contains ("whose description mentions a harbour").
        for (_, condition) in self.unmet() {
            if condition.operator == Operator::Contains && !words.contains(&condition.value) {
                words.push(condition.value.clone());
            }
        }
        words
    }

    fn record_search_words(&self) -> Vec<String> {
        match &self.plan.record {
            Some(Record::Described { words }) if self.record.is_some_and(|r| r < MET) => {
                let mut out: Vec<String> = words
                    .iter()
                    .rev()
                    .filter(|w| w.len() >= 3)
                    .cloned()
                    .collect();
                if words.len() >= 2 {
                    out.push(words.join(" "));
                }
                out
            }
            Some(Record::Name { name }) if self.record.is_some_and(|r| r < MET) => {
                vec![name.clone()]
            }
            _ => Vec::new(),
        }
    }

    /// What following a link does to the plan: the conditions its address adds (a facet's
    /// link, a filter kept and one added) and those it drops (a link back to the whole
    /// listing); and whether it orders as the plan asks.
    pub(super) fn link(&self, element: &Element) -> LinkEffect {
        let Some(href) = element.href.as_deref() else {
            return LinkEffect::default();
        };
        let Ok(url) = url::Url::parse(href) else {
            return LinkEffect::default();
        };
        // Another page than this listing: its query says nothing of this one's conditions.
        if url.path() != self.path {
            return LinkEffect::default();
        }
        let query: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        let mut effect = LinkEffect::default();
        for (i, condition) in self.plan.conditions.iter().enumerate() {
            let before = query_evidence(condition, &self.query);
            let after = query_evidence(condition, &query);
            if after >= MET && before < MET && self.met[i] < MET {
                effect.adds.push(condition.describe());
            } else if before >= MET && after < MET {
                effect.drops.push(condition.describe());
            }
        }
        if let Some(order) = &self.plan.order {
            let sorts = |q: &[(String, String)]| {
                q.iter().any(|(k, v)| {
                    let key = k.to_lowercase();
                    (key.contains("sort") || key.contains("order"))
                        && names_field(&order.field, v)
                        && match order.descending {
                            Some(true) => key.contains("desc") || v.starts_with('-'),
                            Some(false) => !key.contains("desc") && !v.starts_with('-'),
                            None => true,
                        }
                })
            };
            if sorts(&query) && !sorts(&self.query) {
                effect
                    .adds
                    .push(format!("sorted by {}", order.field.join(" ")));
            }
        }
        effect
    }

    /// What sending a form with these values does to the plan: the unmet conditions its
    /// fields would hold (and send), and the met ones a `GET` form would send without.
    pub(super) fn fill(
        &self,
        fields: &[&Element],
        assignment: &[FieldValue],
        observation: &Observation,
    ) -> FillEffect {
        let mut effect = FillEffect::default();
        let holds: Vec<bool> = self
            .plan
            .conditions
            .iter()
            .enumerate()
            .map(|(i, c)| {
                form_holds(
                    c,
                    self.resolved[i].as_ref(),
                    fields,
                    assignment,
                    observation,
                )
            })
            .collect();
        let gets = fields
            .first()
            .and_then(|f| f.form.as_ref())
            .is_some_and(|f| !f.posts);
        let posts = fields
            .first()
            .and_then(|f| f.form.as_ref())
            .is_some_and(|f| f.posts);
        effect.other_record = self.plan.act == Act::Create
            && posts
            && fields.iter().any(|f| {
                is_text_field(f)
                    && observation.values.iter().any(|v| {
                        v.kind == PageValueKind::Field
                            && !v.changed
                            && v.label == f.name
                            && !v.value.trim().is_empty()
                    })
            });
        for (i, condition) in self.plan.conditions.iter().enumerate() {
            if holds[i] && self.met[i] < MET {
                effect.sets.push(condition.describe());
            }
            // A GET form builds the next URL from its fields alone: a condition the query
            // holds now and the form does not is dropped.
            if gets
                && !self.plan.act.writes()
                && !holds[i]
                && query_evidence(condition, &self.query) >= MET
            {
                effect.drops.push(condition.describe());
            }
        }
        effect
    }
}

/// What a link does to the plan.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct LinkEffect {
    /// The conditions (or the order) it adds, described.
    pub(super) adds: Vec<String>,
    /// The met conditions it drops.
    pub(super) drops: Vec<String>,
}

/// What a form's fill does to the plan.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct FillEffect {
    /// The unmet conditions its fields would hold.
    pub(super) sets: Vec<String>,
    /// The met conditions it would send without.
    pub(super) drops: Vec<String>,
    /// It would send the form of a record that exists (its fields hold what the page
    /// served) where the plan makes a new one.
    pub(super) other_record: bool,
    /// It leads away from the login the plan needs (a registration, a password's recovery).
    pub(super) off_login: bool,
}

/// Words of a control that leads away from a login the plan needs: registering, recovering a
/// password.
const OFF_LOGIN_WORDS: &[&str] = &[
    "register",
    "registration",
    "sign up",
    "signup",
    "create account",
    "create an account",
    "lost your login",
    "lost password",
    "forgot",
    "forgotten",
    "reset password",
    "password reset",
    "request password",
    "recover",
];

impl PlanPage {
    /// Whether a control leads away from the login the plan needs (registering, recovering a
    /// password) while the goal says nothing of that.
    pub(super) fn off_login(&self, goal: &str, name: &str) -> bool {
        if !self.plan.needs_login() {
            return false;
        }
        let lower = name.to_lowercase();
        let goal = goal.to_lowercase();
        OFF_LOGIN_WORDS
            .iter()
            .any(|w| lower.contains(w) && !goal.contains(w))
    }
}

/// Whether a page shows the login done: a password field asks for it (0), a control to log
/// out says it holds (1).
fn login_shown(observation: &Observation) -> Option<f64> {
    let visible_password = observation
        .elements
        .iter()
        .any(|e| e.input_type.eq_ignore_ascii_case("password") && !e.disabled);
    if visible_password {
        return Some(0.0);
    }
    observation
        .elements
        .iter()
        .any(|e| super::ends_session(&e.name))
        .then_some(1.0)
}

/// How far a page evidences one condition.
fn evidence(
    condition: &Condition,
    act: Act,
    observation: &Observation,
    query: &[(String, String)],
) -> f64 {
    let mut best = query_evidence(condition, query);
    best = best.max(rows_evidence(condition, &observation.tables));
    if act.writes() || act == Act::Open {
        best = best.max(record_evidence(condition, observation));
    }
    best
}

/// Query keys that carry a search's text.
const SEARCH_KEYS: &[&str] = &[
    "_search",
    "q",
    "search",
    "s",
    "query",
    "@search_text",
    "keywords",
    "text",
    "term",
];

/// How far a URL's query says a condition: its value under a key that names the field (or
/// any key, for less), with the operator a key's suffix names (`population__gt`).
fn query_evidence(condition: &Condition, query: &[(String, String)]) -> f64 {
    let mut best: f64 = 0.0;
    for (key, value) in query {
        if value.trim().is_empty() {
            continue;
        }
        let key_lower = key.to_lowercase();
        if SEARCH_KEYS.contains(&key_lower.as_str()) {
            if matches!(condition.operator, Operator::Contains)
                && condition
                    .spellings()
                    .any(|v| value.to_lowercase().contains(&v.to_lowercase()))
            {
                best = best.max(1.0);
            }
            continue;
        }
        let words: Vec<String> = key_lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        let suffix = words
            .last()
            .filter(|_| words.len() > 1)
            .and_then(|w| forager_protocol::comparison::option_comparator("", w));
        let operator_fits = match suffix {
            Some(comparator) => {
                let said = Operator::of(comparator);
                said == condition.operator
                    || said == Operator::Equals && condition.operator == Operator::Equals
            }
            None => matches!(condition.operator, Operator::Equals | Operator::Contains),
        } || condition.operator == Operator::NotEquals
            && words.last().is_some_and(|w| w == "not");
        let value_fits = value.split(',').any(|part| {
            condition.spellings().any(|v| {
                part.trim().eq_ignore_ascii_case(v.trim())
                    || Operator::Equals.holds(part, v) && v.chars().all(|c| c.is_ascii_digit())
            })
        });
        if !(operator_fits && value_fits) {
            continue;
        }
        let field_fits = condition.field.is_empty() || names_field(&condition.field, key);
        best = best.max(if field_fits {
            1.0
        } else {
            UNNAMED_FIELD_CREDIT
        });
    }
    best
}

/// How far a page's tables say a condition: every row listed satisfies it, in the column its
/// field names (or, where the goal names no field, some column that holds the value).
fn rows_evidence(condition: &Condition, tables: &[forager_protocol::observation::Table]) -> f64 {
    let mut best: f64 = 0.0;
    for table in tables.iter().filter(|t| !t.rows.is_empty()) {
        for (column, header) in table.headers.iter().enumerate() {
            let cells: Vec<&str> = table
                .rows
                .iter()
                .filter_map(|r| r.get(column).map(String::as_str))
                .collect();
            if cells.is_empty() || !cells.iter().all(|c| condition.holds_for(c)) {
                continue;
            }
            let named = names_field(&condition.field, header);
            let credit = if named {
                1.0
            } else if condition.field.is_empty() {
                // A value alone: some column must hold it ("Asia" in each row's continent); a
                // "not resolved" only in a column of states.
                match condition.operator {
                    Operator::NotEquals => {
                        if names_field(&["status".to_owned()], header) {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    _ => 1.0,
                }
            } else {
                // Another column satisfies it (a number over the bound): some evidence.
                match condition.operator {
                    Operator::Greater | Operator::AtLeast | Operator::Less | Operator::AtMost => {
                        0.0
                    }
                    _ => UNNAMED_FIELD_CREDIT,
                }
            };
            best = best.max(credit);
        }
    }
    best
}

/// How far a record's page says a condition the goal sets: a list's option the page served
/// chosen, a term and its definition, or the page's title (for a title), never what was
/// typed or chosen since and not sent.
fn record_evidence(condition: &Condition, observation: &Observation) -> f64 {
    let mut best: f64 = 0.0;
    for value in &observation.values {
        let applies = match value.kind {
            PageValueKind::Choice => !value.changed,
            PageValueKind::Pair => true,
            _ => false,
        };
        if !applies || !condition.holds_for(&value.value) {
            continue;
        }
        if names_field(&condition.field, &value.label) {
            best = best.max(1.0);
        } else if condition.field.is_empty() {
            best = best.max(UNNAMED_FIELD_CREDIT);
        }
    }
    // A title the goal gives, in the page's own title or main heading (a record made).
    if names_field(&condition.field, "title") {
        let heading = observation
            .snapshot
            .iter()
            .filter(|l| l.starts_with("heading "))
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        let typed = observation.values.iter().any(|v| {
            v.kind == PageValueKind::Field && v.changed && v.value.contains(&condition.value)
        });
        if !typed
            && (observation.title.contains(&condition.value) || heading.contains(&condition.value))
        {
            best = best.max(1.0);
        }
    }
    // A text the goal gives (a comment), shown on the page and held by no field.
    if names_field(&condition.field, "text") && condition.value.split_whitespace().count() >= 3 {
        let held = observation
            .values
            .iter()
            .any(|v| v.kind == PageValueKind::Field && v.value.contains(&condition.value));
        if !held && observation.text_excerpt.contains(&condition.value) {
            best = best.max(1.0);
        }
    }
    best
}

/// How far the page is the record the plan's act is on: its number or name in the title or
/// main heading, or its described words there (or, on a page that lists no rows, in its
/// text).
fn record_shown(plan: &Plan, observation: &Observation) -> Option<f64> {
    let record = plan.record.as_ref()?;
    if !matches!(
        plan.act,
        Act::Open | Act::Edit | Act::Comment | Act::Delete | Act::Publish | Act::Unpublish
    ) {
        return None;
    }
    let headings: String = observation
        .snapshot
        .iter()
        .filter(|l| l.starts_with("heading "))
        .take(3)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    let head = format!("{} {}", observation.title, headings).to_lowercase();
    let head_words: Vec<String> = crate::embed::words(&head)
        .map(|w| forager_protocol::comparison::stem(&w))
        .collect();
    let listing = observation.tables.iter().any(|t| t.rows.len() > 1);
    if plan.act == Act::Delete {
        // Gone from the listing it was in: done; its confirmation page: half way.
        let words: Vec<String> = record.words().iter().map(|w| w.to_lowercase()).collect();
        let in_row = |row: &Vec<String>| {
            let text = row.join(" ").to_lowercase();
            words.iter().all(|w| text.contains(w.as_str()))
        };
        let rows: Vec<&Vec<String>> = observation.tables.iter().flat_map(|t| &t.rows).collect();
        if !rows.is_empty() {
            return Some(if rows.iter().any(|r| in_row(r)) {
                0.0
            } else {
                1.0
            });
        }
        let confirms = words.iter().all(|w| head.contains(w.as_str()))
            && (head.contains("delete")
                || observation
                    .text_excerpt
                    .to_lowercase()
                    .contains("are you sure"));
        return Some(if confirms { 0.6 } else { 0.0 });
    }
    Some(match record {
        Record::Number { kind, number } => {
            let path = url::Url::parse(&observation.url)
                .map(|u| u.path().to_lowercase())
                .unwrap_or_default();
            let in_path = path.ends_with(&format!("{kind}{number}"))
                || path.ends_with(&format!("/{number}"))
                || path.contains(&format!("/{number}/"));
            let in_head = head.contains(&format!("{kind} {number}"))
                || head.contains(&format!("{kind}{number}"))
                || head.contains(&format!("#{number}"));
            if in_path || in_head { 1.0 } else { 0.0 }
        }
        Record::Name { name } => {
            if head.contains(&name.to_lowercase()) && !listing {
                1.0
            } else {
                0.0
            }
        }
        Record::Described { words } => {
            let stems: Vec<String> = words
                .iter()
                .map(|w| forager_protocol::comparison::stem(w))
                .collect();
            let in_head = stems.iter().filter(|w| head_words.contains(w)).count();
            let text = observation.text_excerpt.to_lowercase();
            let in_text = stems.iter().filter(|w| text.contains(w.as_str())).count();
            let half = stems.len().div_ceil(2);
            if in_head >= half && in_head > 0 && !listing {
                1.0
            } else if in_text == stems.len() && !listing {
                0.8
            } else if in_text >= half && listing {
                // A listing that holds it: one click from it.
                0.3
            } else {
                0.0
            }
        }
    })
}

/// The page's column an unmet condition names, and the value as the page writes it.
fn resolve(
    condition: &Condition,
    observation: &Observation,
    likeness: &dyn Fn(&str, &str) -> f64,
) -> Option<Resolved> {
    let mut columns: Vec<String> = observation
        .tables
        .iter()
        .flat_map(|t| t.headers.iter().cloned())
        .collect();
    for element in observation
        .elements
        .iter()
        .filter(|e| super::field_kind::is_list(e))
    {
        if super::field_kind::operator_list(element) {
            continue;
        }
        let names_columns = element
            .options
            .iter()
            .filter(|o| {
                columns
                    .iter()
                    .any(|c| c.eq_ignore_ascii_case(o.label.trim()))
            })
            .count()
            >= 2;
        if names_columns || element.name.to_lowercase().contains("column") {
            columns.extend(
                element
                    .options
                    .iter()
                    .filter(|o| !super::field_kind::placeholder(o))
                    .map(|o| o.label.trim().to_owned()),
            );
        }
    }
    columns.retain(|c| !c.trim().is_empty());
    columns.dedup();
    let spellings_in = |column: &str| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for table in &observation.tables {
            let Some(at) = table
                .headers
                .iter()
                .position(|h| h.eq_ignore_ascii_case(column))
            else {
                continue;
            };
            for row in &table.rows {
                let Some(cell) = row.get(at) else { continue };
                for spelling in condition.spellings() {
                    let lower = cell.to_lowercase();
                    let wanted = spelling.to_lowercase();
                    let words: Vec<&str> = cell
                        .split(|c: char| c.is_whitespace() || c == '\u{a0}')
                        .filter(|w| !w.is_empty())
                        .collect();
                    if lower.trim() == wanted {
                        out.push(cell.trim().to_owned());
                    } else if crate::embed::words(&lower)
                        .collect::<Vec<_>>()
                        .join(" ")
                        .contains(&wanted)
                    {
                        // A label beside its key ("Peru PE"): the key is what a filter takes.
                        out.push(spelling.to_owned());
                        for key in words.iter().filter(|w| {
                            w.len() <= 4
                                && !w.eq_ignore_ascii_case(&wanted)
                                && w.chars()
                                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                        }) {
                            out.push((*key).to_owned());
                        }
                    }
                }
            }
        }
        out.dedup();
        out
    };
    let numeric = matches!(
        condition.operator,
        Operator::Greater | Operator::AtLeast | Operator::Less | Operator::AtMost
    );
    // By the field's words.
    if !condition.field.is_empty() {
        let named = columns
            .iter()
            .find(|c| names_field(&condition.field, c))
            .or_else(|| {
                let words = condition.field.join(" ");
                columns
                    .iter()
                    .map(|c| (likeness(&words, &c.replace(['_', '-'], " ")), c))
                    .filter(|(l, _)| *l >= COLUMN_LIKENESS)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map(|(_, c)| c)
            });
        if let Some(column) = named {
            let mut spellings = if numeric {
                Vec::new()
            } else {
                spellings_in(column)
            };
            spellings.extend(condition.spellings().map(str::to_owned));
            spellings.dedup();
            return Some(Resolved {
                column: column.clone(),
                spellings,
            });
        }
    }
    if numeric {
        return None;
    }
    // By the cells that hold the value.
    columns.iter().find_map(|column| {
        let spellings = spellings_in(column);
        (!spellings.is_empty()).then(|| Resolved {
            column: column.clone(),
            spellings,
        })
    })
}

/// Whether a form, once filled with `assignment`, holds a condition in its fields: a list
/// showing an option that says it, a text field holding its value, or a filter row (a column
/// list on the condition's column, an operator list on its operator, a value field with its
/// value).
fn form_holds(
    condition: &Condition,
    resolved: Option<&Resolved>,
    fields: &[&Element],
    assignment: &[FieldValue],
    observation: &Observation,
) -> bool {
    let value_of = |field: &Element| -> Option<String> {
        let target = target_of(field);
        if let Some(assigned) = assignment.iter().find(|a| a.target == target) {
            return match &assigned.value {
                FillValue::Literal(text) => {
                    if assigned.select {
                        // The option chosen, by its value or its label: its label.
                        field
                            .options
                            .iter()
                            .find(|o| o.value == *text || o.label.trim() == text.trim())
                            .map(|o| o.label.trim().to_owned())
                            .or_else(|| Some(text.clone()))
                    } else {
                        Some(text.clone())
                    }
                }
                FillValue::Input(_) => None,
            };
        }
        let kind = if super::field_kind::is_list(field) {
            PageValueKind::Choice
        } else {
            PageValueKind::Field
        };
        observation
            .values
            .iter()
            .find(|v| v.kind == kind && v.label == field.name)
            .map(|v| v.value.clone())
    };
    // Filter rows: the operator lists and what sits beside each.
    for (at, operator) in fields.iter().enumerate() {
        if !super::field_kind::is_list(operator) || !super::field_kind::operator_list(operator) {
            continue;
        }
        let Some(op_label) = value_of(operator) else {
            continue;
        };
        let op_value = operator
            .options
            .iter()
            .find(|o| o.label.trim() == op_label.trim())
            .map_or(String::new(), |o| o.value.clone());
        let said =
            forager_protocol::comparison::option_comparator(&op_label, &op_value).map(Operator::of);
        let operator_fits = said == Some(condition.operator)
            || condition.operator == Operator::NotEquals
                && (op_value == "not" || op_label.trim() == "!=");
        if !operator_fits {
            continue;
        }
        let column = fields[..at]
            .iter()
            .rev()
            .find(|f| super::field_kind::is_list(f) && !super::field_kind::operator_list(f));
        let value_field = fields[at + 1..]
            .iter()
            .find(|f| is_text_field(f) && !is_search_box(f));
        let (Some(column), Some(value_field)) = (column, value_field) else {
            continue;
        };
        let column_fits = value_of(column).is_some_and(|c| {
            names_field(&condition.field, &c)
                || resolved.is_some_and(|r| r.column.eq_ignore_ascii_case(c.trim()))
        });
        let value_fits = value_of(value_field).is_some_and(|v| {
            condition
                .spellings()
                .any(|s| v.trim().eq_ignore_ascii_case(s.trim()))
                || resolved.is_some_and(|r| {
                    r.spellings
                        .iter()
                        .any(|s| v.trim().eq_ignore_ascii_case(s.trim()))
                })
        });
        if column_fits && value_fits {
            return true;
        }
    }
    // Plain fields: a list or a text field named for the condition (or, for a value the goal
    // names alone, any list) holding it.
    fields.iter().any(|field| {
        if super::field_kind::is_list(field) && super::field_kind::operator_list(field) {
            return false;
        }
        let list = super::field_kind::is_list(field);
        let named = names_field(&condition.field, &field.name)
            || condition.field.is_empty() && list
            || resolved.is_some_and(|r| names_field(&field_words_of(&r.column), &field.name));
        named
            && value_of(field).is_some_and(|v| {
                if list {
                    condition.said_by(&v)
                        || condition.operator == Operator::Equals
                            && condition
                                .spellings()
                                .any(|s| v.trim().eq_ignore_ascii_case(s.trim()))
                } else {
                    condition
                        .spellings()
                        .any(|s| v.trim().eq_ignore_ascii_case(s.trim()))
                }
            })
    })
}

/// A form filled with the plan's unmet conditions, each in the field it names: a text field
/// the value, a list the option that says it (for a value the goal gives without a field, the
/// list that has an option of that name); the fields of met conditions, and all others, as
/// they are. `None` where no unmet condition has a field in the form.
pub(super) fn plan_fields(fields: &[&Element], plan: &PlanPage) -> Option<Vec<FieldValue>> {
    let mut assignment: Vec<FieldValue> = Vec::new();
    let mut used: Vec<Target> = Vec::new();
    for (i, condition) in plan.unmet() {
        if !matches!(condition.operator, Operator::Equals) {
            continue;
        }
        let resolved = plan.resolved[i].as_ref();
        let named = |f: &&&Element| {
            names_field(&condition.field, &f.name)
                || resolved.is_some_and(|r| names_field(&field_words_of(&r.column), &f.name))
        };
        let free = |f: &&&Element| !used.contains(&target_of(f));
        // A list: the option that says the value.
        let list_choice = fields
            .iter()
            .filter(|f| super::field_kind::is_list(f) && !super::field_kind::operator_list(f))
            .filter(free)
            .filter(|f| condition.field.is_empty() || named(f))
            .find_map(|f| {
                f.options
                    .iter()
                    .filter(|o| !super::field_kind::placeholder(o))
                    .find(|o| {
                        condition
                            .spellings()
                            .any(|v| o.label.trim().eq_ignore_ascii_case(v.trim()))
                            || condition.said_by(&o.label)
                    })
                    .map(|o| super::field_kind::select(f, super::field_kind::option_value(o)))
            });
        if let Some(choice) = list_choice {
            used.push(choice.target.clone());
            assignment.push(choice);
            continue;
        }
        if condition.field.is_empty() {
            continue;
        }
        let text = fields
            .iter()
            .filter(|f| is_text_field(f) && !f.unsent)
            .filter(free)
            .find(named)
            .or_else(|| {
                // A text the goal says ("saying "…"") into the one multi-line field.
                names_field(&condition.field, "text")
                    .then(|| {
                        let long: Vec<&&Element> = fields
                            .iter()
                            .filter(|f| super::field_kind::multi_line(f))
                            .filter(free)
                            .collect();
                        (long.len() == 1).then(|| long[0])
                    })
                    .flatten()
            });
        if let Some(field) = text {
            let typed = super::field_kind::typed(field, condition.value.clone());
            used.push(typed.target.clone());
            assignment.push(typed);
        }
    }
    (!assignment.is_empty()).then_some(assignment)
}

impl<E: Embedder> DefaultPolicy<E> {
    /// A filter row filled for each unmet condition the page resolves, in a row whose value
    /// field is empty (the rows holding met conditions stay as they are): the column list on
    /// the condition's column, the operator list on its operator, the value as the page
    /// writes it. One assignment per spelling (at most two).
    pub(super) fn plan_filter_rows(
        &self,
        fields: &[&Element],
        plan: &PlanPage,
        observation: &Observation,
    ) -> Vec<(Vec<FieldValue>, f64)> {
        let held = |field: &Element| {
            observation.values.iter().any(|v| {
                v.kind == PageValueKind::Field
                    && v.label == field.name
                    && !v.value.trim().is_empty()
            })
        };
        // The rows: (column list, operator list, value field) with an empty value field.
        let mut rows = Vec::new();
        for (at, operator) in fields.iter().enumerate() {
            if !super::field_kind::is_list(operator) || !super::field_kind::operator_list(operator)
            {
                continue;
            }
            let column = fields[..at]
                .iter()
                .rev()
                .find(|f| super::field_kind::is_list(f) && !super::field_kind::operator_list(f));
            let value = fields[at + 1..]
                .iter()
                .find(|f| is_text_field(f) && !is_search_box(f));
            if let (Some(column), Some(value)) = (column, value)
                && !held(value)
            {
                rows.push((*column, *operator, *value));
            }
        }
        let Some(&(column_list, operator_list, value_field)) = rows.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, condition) in plan.unmet() {
            let Some(resolved) = &plan.resolved[i] else {
                continue;
            };
            let Some(column) = column_list
                .options
                .iter()
                .find(|o| o.label.trim().eq_ignore_ascii_case(&resolved.column))
            else {
                continue;
            };
            let wanted = |o: &forager_protocol::observation::SelectOption| {
                let said = forager_protocol::comparison::option_comparator(&o.label, &o.value)
                    .map(Operator::of);
                match condition.operator {
                    Operator::NotEquals => o.value == "not" || o.label.trim() == "!=",
                    op => said == Some(op),
                }
            };
            let Some(op) = operator_list.options.iter().find(|o| wanted(o)) else {
                continue;
            };
            let mut spellings: Vec<&String> = resolved.spellings.iter().collect();
            // A key beside a label ("PE" beside "Peru") is what a filter on the column takes.
            spellings.sort_by_key(|s| {
                !(s.len() <= 4
                    && s.chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
            });
            for (n, spelling) in spellings.into_iter().take(2).enumerate() {
                let assignment = vec![
                    super::field_kind::select(column_list, super::field_kind::option_value(column)),
                    super::field_kind::select(operator_list, super::field_kind::option_value(op)),
                    super::field_kind::typed(value_field, spelling.clone()),
                ];
                out.push((assignment, if n == 0 { 1.0 } else { 0.6 }));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::observation::{FormContext, PageValue, SelectOption, Table};

    fn table(headers: &[&str], rows: &[&[&str]]) -> Table {
        Table {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| (*c).to_owned()).collect())
                .collect(),
        }
    }

    fn countries(url: &str, rows: &[&[&str]]) -> Observation {
        let mut page = crate::testing::page(url, vec![]);
        page.tables = vec![table(&["name", "continent", "population"], rows)];
        page
    }

    fn none(_: &str, _: &str) -> f64 {
        0.0
    }

    const ALL: &[&[&str]] = &[
        &["France", "Europe", "68,000,000"],
        &["India", "Asia", "1,428,000,000"],
        &["Japan", "Asia", "124,000,000"],
        &["Peru", "South America", "34,000,000"],
    ];

    #[test]
    fn every_listed_row_evidences_a_condition_and_the_share_counts_them() {
        let goal = "Which Asian countries have more than 100 million people? Show just those";
        let plan = || Plan::of(goal);
        let start = PlanPage::of(&countries("http://h/db/countries", ALL), plan(), &none);
        assert_eq!(start.share(), Some(0.0));
        let asia = PlanPage::of(
            &countries("http://h/db/countries?continent=Asia", &[ALL[1], ALL[2]]),
            plan(),
            &none,
        );
        assert_eq!(
            asia.share(),
            Some(1.0),
            "both hold in every row: {:?}",
            asia.met
        );
        let one = PlanPage::of(
            &countries(
                "http://h/db/countries?continent=Asia",
                &[ALL[1], ALL[2], &["Iran", "Asia", "89,000,000"]],
            ),
            plan(),
            &none,
        );
        assert_eq!(one.share(), Some(0.5), "{:?}", one.met);
        assert_eq!(one.unmet().count(), 1);
    }

    #[test]
    fn a_value_without_a_field_resolves_to_the_column_that_holds_it() {
        let plan = Plan::of("Which Asian countries have more than 100 million people?");
        let page = PlanPage::of(&countries("http://h/db/countries", ALL), plan, &none);
        let asian = page
            .plan
            .conditions
            .iter()
            .position(|c| c.value == "Asian")
            .expect("Asian");
        let resolved = page.resolved[asian].as_ref().expect("resolved");
        assert_eq!(resolved.column, "continent");
        assert_eq!(resolved.spellings[0], "Asia");
        // "people" is the population by its synonyms.
        let people = page
            .plan
            .conditions
            .iter()
            .position(|c| c.operator == Operator::Greater)
            .expect(">");
        assert_eq!(
            page.resolved[people].as_ref().map(|r| r.column.as_str()),
            Some("population")
        );
        // A label beside its key: the key too.
        let mut cities = crate::testing::page("http://h/db/cities", vec![]);
        cities.tables = vec![table(
            &["name", "country_code"],
            &[&["Lima", "Peru\u{a0}PE"], &["Rio", "Brazil\u{a0}BR"]],
        )];
        let plan = Plan::of("Show the cities in Brazil with more than 5 million inhabitants");
        let page = PlanPage::of(&cities, plan, &none);
        let brazil = page
            .plan
            .conditions
            .iter()
            .position(|c| c.value == "Brazil")
            .expect("Brazil");
        let resolved = page.resolved[brazil].as_ref().expect("resolved");
        assert_eq!(resolved.column, "country_code");
        assert!(
            resolved.spellings.contains(&"BR".to_owned()),
            "{resolved:?}"
        );
    }

    #[test]
    fn a_query_evidences_under_the_key_its_operator_names() {
        let plan = Plan::of("Which European countries have more than 60 million people?");
        let page = |url: &str| {
            PlanPage::of(
                &countries(url, &[]),
                Plan::of("Which European countries have more than 60 million people?"),
                &none,
            )
        };
        assert_eq!(
            page("http://h/c?population__gt=60000000").share(),
            Some(0.5)
        );
        assert_eq!(
            page("http://h/c?population__lt=60000000").share(),
            Some(0.0)
        );
        assert_eq!(
            page("http://h/c?continent=Europe&population__gt=60000000").share(),
            Some(1.0)
        );
        drop(plan);
    }

    #[test]
    fn links_that_add_a_condition_or_drop_one() {
        let plan = Plan::of("Which Asian countries have more than 100 million people?");
        let mut observation = countries(
            "http://h/db/countries?population__gt=100000000",
            &[ALL[1], ALL[2]],
        );
        observation.tables[0].rows.push(vec![
            "US".into(),
            "North America".into(),
            "335,000,000".into(),
        ]);
        let page = PlanPage::of(&observation, plan, &none);
        let mut facet = crate::testing::control("link", "Asia", "");
        facet.href = Some("http://h/db/countries?population__gt=100000000&continent=Asia".into());
        let effect = page.link(&facet);
        assert_eq!(effect.adds, vec!["? = Asian".to_owned()]);
        assert!(effect.drops.is_empty());
        let mut all = crate::testing::control("link", "countries", "");
        all.href = Some("http://h/db/countries".into());
        assert_eq!(page.link(&all).drops.len(), 1);
        let mut elsewhere = crate::testing::control("link", "India", "");
        elsewhere.href = Some("http://h/db/countries/IN".into());
        assert_eq!(page.link(&elsewhere), LinkEffect::default());
    }

    #[test]
    fn a_filter_row_is_filled_for_the_unmet_condition_in_an_empty_row() {
        let option = |label: &str, value: &str| SelectOption {
            label: label.into(),
            value: value.into(),
        };
        let form = FormContext {
            name: String::new(),
            submit_name: Some("Apply".into()),
            posts: false,
            selector: "form.filters".into(),
            implicit: false,
        };
        let list = |name: &str, options: Vec<SelectOption>| {
            let mut e = crate::testing::control("combobox", name, "");
            e.tag = "select".into();
            e.options = options;
            e.form = Some(form.clone());
            e
        };
        let field = |name: &str| {
            let mut e = crate::testing::control("textbox", name, "");
            e.tag = "input".into();
            e.input_type = "text".into();
            e.form = Some(form.clone());
            e
        };
        let columns = || {
            vec![
                option("- column -", ""),
                option("name", ""),
                option("continent", ""),
                option("population", ""),
            ]
        };
        let operators = || {
            vec![
                option("=", "exact"),
                option("!=", "not"),
                option(">", "gt"),
                option("<", "lt"),
                option("contains", "contains"),
            ]
        };
        let elements = vec![
            list("_filter_column_1", columns()),
            list("_filter_op_1", operators()),
            field("_filter_value_1"),
            list("_filter_column", columns()),
            list("_filter_op", operators()),
            field("_filter_value"),
        ];
        let mut observation = countries(
            "http://h/db/countries?population__gt=100000000",
            &[ALL[1], ALL[2], &["US", "North America", "335,000,000"]],
        );
        observation.elements = elements;
        observation.values = vec![
            PageValue {
                label: "_filter_value_1".into(),
                value: "100000000".into(),
                kind: PageValueKind::Field,
                changed: false,
            },
            PageValue {
                label: "_filter_column_1".into(),
                value: "population".into(),
                kind: PageValueKind::Choice,
                changed: false,
            },
            PageValue {
                label: "_filter_op_1".into(),
                value: ">".into(),
                kind: PageValueKind::Choice,
                changed: false,
            },
        ];
        let plan = PlanPage::of(
            &observation,
            Plan::of("Which Asian countries have more than 100 million people?"),
            &none,
        );
        assert_eq!(plan.unmet().count(), 1);
        let policy = DefaultPolicy::default();
        let fields: Vec<&Element> = observation.elements.iter().collect();
        let rows = policy.plan_filter_rows(&fields, &plan, &observation);
        assert!(!rows.is_empty());
        let (assignment, _) = &rows[0];
        let names: Vec<&str> = assignment.iter().map(|f| f.target.name.as_str()).collect();
        assert_eq!(names, vec!["_filter_column", "_filter_op", "_filter_value"]);
        assert_eq!(assignment[2].value, FillValue::Literal("Asia".into()));
        // Both conditions held once sent: the row kept and the row filled.
        let effect = plan.fill(&fields, assignment, &observation);
        assert_eq!(effect.sets, vec!["? = Asian".to_owned()]);
        assert!(effect.drops.is_empty(), "{effect:?}");
    }

    #[test]
    fn a_record_page_evidences_only_what_it_served() {
        let plan = || Plan::of("Log in as alice and raise the priority of issue 3 to urgent");
        let mut page = crate::testing::page("http://h/tracker/issue3", vec![]);
        page.values = vec![PageValue {
            label: "priority".into(),
            value: "urgent".into(),
            kind: PageValueKind::Choice,
            changed: true,
        }];
        let read = PlanPage::of(&page, plan(), &none);
        assert_eq!(read.met, vec![0.0], "chosen, not sent");
        assert_eq!(read.record, Some(1.0));
        page.values[0].changed = false;
        assert_eq!(PlanPage::of(&page, plan(), &none).share(), Some(1.0));
    }
}
