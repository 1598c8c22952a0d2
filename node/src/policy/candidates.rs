//! The default policy's proposals for one page: every kind of candidate (clicks, clicks into
//! fields, lists, compound checks, whole forms, single fields, items' controls, hovers,
//! scrolls, sliders, a calendar's walk) with its affinity and its why, and the page's value.
//!
//! A page is read once ([`PageRead`]); each kind of candidate has its own function; clicks
//! take their affinity from the named signals of `signals.rs`, the page's value from its
//! parts there too. `propose` (in `mod.rs`) only calls [`DefaultPolicy::proposals`].

use super::signals::{self, ClickPage, GOAL_SIMILARITY};
use super::*;
use crate::environment::Why;

/// A candidate, its affinity (its prior before normalisation) and what of that says the page
/// is promising (`None`: nothing, as for a compound action or a scroll).
pub(super) struct Scored {
    candidate: Candidate<Action>,
    affinity: f64,
    promise: Option<f64>,
}

impl Scored {
    fn new(candidate: Candidate<Action>, affinity: f64, why: Why) -> Scored {
        Scored {
            candidate: Candidate { why, ..candidate },
            affinity,
            promise: Some(affinity),
        }
    }

    /// A candidate whose affinity says nothing of the page's promise.
    fn aside(candidate: Candidate<Action>, affinity: f64, why: Why) -> Scored {
        Scored {
            promise: None,
            ..Scored::new(candidate, affinity, why)
        }
    }
}

/// A candidate with nothing set but its action, risk and key (its prior is set once all are
/// scored, its why by [`Scored`]).
fn candidate(action: Action, risk: RiskClass, key: u64) -> Candidate<Action> {
    Candidate {
        action,
        prior: 0.0,
        risk,
        key,
        target: None,
        refused: None,
        why: Why::default(),
    }
}

/// What the policy reads of a page for its goal, once.
pub(super) struct PageRead<'a> {
    observation: &'a Observation,
    task: &'a TaskContext,
    reading: &'a GoalReading,
    goal: SparseVector,
    sources: Vec<ValueSource>,
    spare: Vec<String>,
    positions: Vec<f64>,
    extremes: Vec<bool>,
    calendar: Option<Calendar>,
    choices: Choices<'a>,
    hidden_quoted: bool,
    pressed_toggles: Vec<&'a Element>,
    progress: GoalProgress,
    item_shares: Vec<f64>,
    goal_count: Option<u32>,
    /// How many controls share each role and name (a "Like" under every post).
    twins: HashMap<(&'a str, &'a str), usize>,
    /// What the goal names for the precise assignments of a form.
    named: super::precise::NamedValues,
    /// The goal's plan against this page.
    plan: super::plan::PlanPage,
}

impl<'a> PageRead<'a> {
    fn of<E: Embedder>(
        policy: &DefaultPolicy<E>,
        observation: &'a Observation,
        task: &'a TaskContext,
        reading: &'a GoalReading,
    ) -> PageRead<'a> {
        let goal = policy.embedder.embed(&task.goal);
        let sources = policy.sources(observation, task, reading, &goal);
        let plan = forager_protocol::plan::Plan::of(&task.goal);
        // A goal read as a plan says what goes where: its conditions' values, its inputs. On a
        // page of real forms, its other words are no values to type (a search box, a
        // superseder, an email field given "report", "new", "bug").
        let real_forms = observation
            .elements
            .iter()
            .any(|e| e.form.as_ref().is_some_and(|f| !f.implicit));
        let spare = if !plan.conditions.is_empty() && real_forms {
            Vec::new()
        } else {
            spare_words(&task.goal, observation, &sources)
        };
        let choices = Choices::of(observation, &task.goal);
        let hidden_quoted = reading.quoted.iter().any(|q| {
            !observation.elements.iter().any(|e| {
                e.name.eq_ignore_ascii_case(&q.text) || e.text.eq_ignore_ascii_case(&q.text)
            })
        });
        // The goal's quoted toggles on the items of someone it names already pressed ("Like"
        // on her posts), and the shapes it names when it asks for all of them.
        let pressed_toggles: Vec<&Element> = quoted_item_toggles(observation, reading)
            .filter(|(e, theirs)| *theirs && e.checked && !choices.undoing)
            .map(|(e, _)| e)
            .chain(observation.elements.iter().filter(|e| {
                e.checked
                    && !choices.undoing
                    && choices.goal_words.contains(" all ")
                    && named_shape(e, &choices)
            }))
            .collect();
        let clickable: Vec<bool> = observation
            .elements
            .iter()
            .map(|e| !e.disabled && is_clickable(e))
            .collect();
        let items_read = policy.weights.on(super::families::ITEM_CONTROLS);
        let mut twins: HashMap<(&str, &str), usize> = HashMap::new();
        for element in &observation.elements {
            *twins
                .entry((element.role.as_str(), element.name.as_str()))
                .or_default() += 1;
        }
        PageRead {
            positions: position_bonus(observation, reading),
            extremes: crate::superlative::extremes(
                crate::superlative::Superlative::of(&task.goal),
                &observation.elements,
            ),
            calendar: Calendar::of(observation, reading),
            progress: goal_progress(observation, reading, &task.goal),
            item_shares: if items_read {
                crate::item_controls::item_shares(&observation.elements, &task.goal, &clickable)
            } else {
                vec![0.0; observation.elements.len()]
            },
            goal_count: crate::item_controls::goal_count(&task.goal)
                .filter(|n| items_read && *n <= forager_protocol::workflow::MAX_REPEAT),
            observation,
            task,
            reading,
            goal,
            sources,
            spare,
            choices,
            hidden_quoted,
            pressed_toggles,
            twins,
            named: super::precise::NamedValues::of(observation, task, reading),
            plan: super::plan::PlanPage::of(observation, plan, &|a: &str, b: &str| {
                let lexical = policy.similarity(&policy.embedder.embed(a), b);
                (lexical * lexical).max(policy.semantic(a, b))
            }),
        }
    }

    fn clicks(&self) -> ClickPage<'_> {
        ClickPage {
            observation: self.observation,
            task: self.task,
            reading: self.reading,
            choices: &self.choices,
            positions: &self.positions,
            extremes: &self.extremes,
            item_shares: &self.item_shares,
            hidden_quoted: self.hidden_quoted,
            pressed_toggles: &self.pressed_toggles,
            values_held: self.progress.values == Some(1.0),
            values_pending: self.progress.values.is_some_and(|v| v < 1.0),
            calendar: self.calendar.as_ref(),
            plan: Some(&self.plan),
        }
    }

    /// A field that already holds a value (a forward's quoted message the page put there, or
    /// a value typed before) is typed over after the empty ones: what the page put there may
    /// be what it checks.
    fn kept(&self, element: &Element) -> f64 {
        let prefilled = self.observation.values.iter().any(|v| {
            v.kind == PageValueKind::Field && v.label == element.name && !v.value.is_empty()
        });
        if prefilled { PREFILLED_FILL } else { 1.0 }
    }
}

/// A field click's weight against its likeness to the goal: focusing a field is seldom the
/// point (its fill does that), unless the field takes no typing (a date picker opens).
const FIELD_CLICK_WEIGHT: f64 = 0.3;

/// The weight of typing into a field outside a form and pressing Enter, against only typing.
const ENTER_WEIGHT: f64 = 0.6;

/// The affinity of an action that makes several of the goal's choices at once (or presses
/// the control of each item it names): above any single click of them.
const COMPOUND_AFFINITY: f64 = 1.5;

/// The affinity of choosing the options the goal names in a list that holds several.
const NAMED_OPTIONS_AFFINITY: f64 = 1.0;

/// The affinity of clicking into a field that takes no typing while a value the goal gives is
/// not held yet (the way to a date picker's calendar).
const PICKER_AFFINITY: f64 = 1.0;

/// The affinity of a form filled with exactly what the goal names (a comparison in a filter
/// row, the options and quoted values it names in a big form): as a compound action, above
/// any single click, since one click cannot say what it says.
const NAMED_FIELDS_AFFINITY: f64 = COMPOUND_AFFINITY;

/// How a form's assignment was made, which says how its candidate is scored.
#[derive(Clone)]
enum Made {
    /// By the values' fit to the fields (`DefaultPolicy::assignments`), with its quality.
    Assigned(f64),
    /// From what the goal names (`DefaultPolicy::precise_assignments`), with its fit.
    Named(f64),
}

/// A form's affinity: half its words' likeness to the goal, half how well values fit its
/// fields.
const FORM_WORDS_SHARE: f64 = 0.5;

/// Added to every affinity before normalising, so that no candidate's prior is 0.
const PRIOR_FLOOR: f64 = 0.05;

/// How much of a page's most promising action its value hint takes: the rest is left to what
/// the page shows of the goal done, so that those tell apart pages whose next steps all look
/// good.
const ACTION_PROMISE_SHARE: f64 = 0.8;

impl<E: Embedder> DefaultPolicy<E> {
    /// The candidates of a page and its value hint.
    pub(super) fn proposals(&self, observation: &Observation, task: &TaskContext) -> Proposals {
        let reading = GoalReading::of(&task.goal);
        let page = PageRead::of(self, observation, task, &reading);
        let mut scored = Vec::new();
        let mut aside = Vec::new();
        self.clicks(&page, &mut scored, &mut aside);
        self.field_clicks(&page, &mut scored, &mut aside);
        scored.extend(named_options_selections(&page));
        self.form_fills(&page, &mut scored);
        self.loose_fills(&page, &mut scored);
        scored.extend(choices_check(&page));
        scored.extend(item_checks(&page));
        for command in super::terminal::commands(&observation.terminals, &task.goal) {
            let key = action_key(&command.action.label());
            let typed = candidate(command.action, command.risk, key);
            scored.push(Scored::new(typed, command.affinity, command.why));
        }
        scored.append(&mut aside);
        for (candidate, affinity) in scroll_candidates(observation, &task.goal) {
            scored.push(Scored::aside(
                candidate,
                affinity,
                Why::single("scroll", affinity),
            ));
        }
        for (candidate, affinity) in slide_candidates(observation, &task.goal) {
            let why = Why::single("slider_numbers", affinity);
            scored.push(Scored::aside(candidate, affinity, why));
        }
        if let Some((candidate, affinity)) =
            page.calendar.as_ref().and_then(|c| c.walk(observation))
        {
            let why = Why::single("calendar_step", affinity);
            scored.push(Scored::aside(candidate, affinity, why));
        }
        let value_hint = self.value_hint(&page, &scored);
        let total: f64 = scored.iter().map(|s| s.affinity + PRIOR_FLOOR).sum();
        let candidates = scored
            .into_iter()
            .map(
                |Scored {
                     mut candidate,
                     affinity,
                     ..
                 }| {
                    candidate.prior = (affinity + PRIOR_FLOOR) / total.max(f64::MIN_POSITIVE);
                    // One key per action, computable from the action alone (a branch prefix's
                    // steps, another node's trace): the key of its label.
                    candidate.key = action_key(&candidate.action.label());
                    candidate
                },
            )
            .collect();
        Proposals {
            candidates,
            value_hint,
        }
    }

    /// The page's value: its likeness to the goal or its most promising action's, whichever
    /// is larger, combined with what it shows of the goal done (`signals::page_value`).
    fn value_hint(&self, page: &PageRead<'_>, scored: &[Scored]) -> f64 {
        let observation = page.observation;
        let best_action = scored.iter().filter_map(|s| s.promise).fold(0.0, f64::max);
        let headings: Vec<&str> = observation
            .snapshot
            .iter()
            .filter(|l| l.starts_with("heading "))
            .map(String::as_str)
            .take(5)
            .collect();
        let page_text = format!("{} {}", observation.title, headings.join(" "));
        let about = self
            .similarity(&page.goal, &page_text)
            .max(self.semantic(&page.task.goal, &page_summary(observation, &page.task.goal)));
        let hint = about.max(ACTION_PROMISE_SHARE * best_action.min(1.0));
        let parts = signals::PageParts {
            progress: page.progress,
            dates: date_progress(observation, page.reading),
            plan: page.plan.share(),
        };
        signals::page_value(hint, &parts, &self.weights)
    }

    /// Clicks on the page's controls, by their named signals; with them the repeated presses
    /// of an item's control the goal counts, and (aside) the hovers of menu items with a
    /// submenu.
    fn clicks(&self, page: &PageRead<'_>, scored: &mut Vec<Scored>, aside: &mut Vec<Scored>) {
        let observation = page.observation;
        let clicks = page.clicks();
        for (index, element) in observation.elements.iter().enumerate() {
            if element.disabled || !is_clickable(element) {
                continue;
            }
            if page.calendar.as_ref().is_some_and(|c| c.other_day(element)) {
                continue;
            }
            if let Some(href) = &element.href
                && !page.task.allows(href)
            {
                continue;
            }
            let risk = click_risk(element);
            let base = self.mixed_affinity(&page.goal, &page.task.goal, element);
            let all = signals::click_lifts(&clicks, index, element);
            let (affinity, why) = signals::combine(base, &all, &self.weights);
            let promising: Vec<_> = all
                .iter()
                .copied()
                .filter(|(name, _)| {
                    signals::CLICK_SIGNALS
                        .iter()
                        .any(|s| s.name == *name && !s.prior_only)
                })
                .collect();
            let (promise, _) = signals::combine(base, &promising, &self.weights);
            let target = element
                .href
                .as_deref()
                .filter(|href| leaves_page(href, &observation.url))
                .map(location_of);
            let twins = page
                .twins
                .get(&(element.role.as_str(), element.name.as_str()))
                > Some(&1);
            scored.push(Scored {
                promise: Some(promise),
                ..Scored::new(
                    click_candidate(element, risk, target, twins),
                    affinity,
                    why.clone(),
                )
            });
            // "Order 4 items that are vegan": one dish's "+" pressed four times.
            if let Some(times) = page.goal_count.filter(|_| page.item_shares[index] >= 1.0) {
                let action = Action::Repeat {
                    target: target_of(element),
                    times,
                };
                let key = action_key(&format!(
                    "repeat {} {} in {} {times}",
                    element.role, element.name, element.record
                ));
                scored.push(Scored::new(
                    candidate(action, risk, key),
                    promise,
                    why.clone(),
                ));
            }
            // A menu item with a submenu: pointing at it opens what clicking would choose past.
            if element.popup {
                aside.push(Scored::aside(hover_candidate(element), promise, why));
            }
        }
    }

    /// Clicks into text fields (focus, or a widget such as a date picker opens): seldom the
    /// point, a low prior; a read-only one while a value the goal gives is not held yet is the
    /// way to its picker (aside: an empty date field says nothing of the page's promise).
    fn field_clicks(&self, page: &PageRead<'_>, scored: &mut Vec<Scored>, aside: &mut Vec<Scored>) {
        for (index, element) in page.observation.elements.iter().enumerate() {
            if element.disabled || !is_text_field(element) {
                continue;
            }
            // A click into a field only focuses it: its form's submission is not its risk.
            let risk = risk::classify(ActionShape::Click, &element_context(element));
            if element.readonly && page.progress.values.is_some_and(|v| v < 1.0) {
                let why = Why::single("opens_picker", PICKER_AFFINITY);
                let click = click_candidate(element, risk, None, false);
                aside.push(Scored::aside(click, PICKER_AFFINITY, why));
                continue;
            }
            let weight = if element.readonly {
                1.0
            } else {
                FIELD_CLICK_WEIGHT
            };
            let likeness = weight * self.mixed_affinity(&page.goal, &page.task.goal, element);
            let position = page.positions[index];
            let why = Why(vec![(GOAL_SIMILARITY, likeness), ("position", position)]);
            let click = click_candidate(element, risk, None, false);
            scored.push(Scored::new(click, likeness + position, why));
        }
    }

    /// Whole forms: each assignment of values to a form's fields, submitted by its button or
    /// by Enter in its last single-line field.
    fn form_fills(&self, page: &PageRead<'_>, scored: &mut Vec<Scored>) {
        for fields in fields_by_form(page.observation).values() {
            let submit = submit_control(page.observation, fields);
            let precise = self.precise_assignments(fields, &page.named, page.reading);
            let sources = super::fill::credentials_stay_home(&page.sources, fields, page.task);
            let mut made: Vec<(Vec<FieldValue>, Made)> = self
                .assignments(fields, &sources, &page.spare, &page.goal)
                .into_iter()
                .filter(|(a, _)| !precise.iter().any(|(p, _)| p == a))
                .map(|(a, quality)| (a, Made::Assigned(quality)))
                .collect();
            made.extend(precise.into_iter().map(|(a, fit)| (a, Made::Named(fit))));
            for (assignment, fit) in self.plan_filter_rows(fields, &page.plan, page.observation) {
                if !made.iter().any(|(a, _)| *a == assignment) {
                    made.push((assignment, Made::Named(fit)));
                }
            }
            if let Some(planned) = super::plan::plan_fields(fields, &page.plan) {
                // The plan's fields over the best other fill: what the plan cannot place ("by
                // Witt" beside "Director Name") keeps the value that fill gave it.
                let base = made
                    .iter()
                    .find(|(_, m)| matches!(m, Made::Named(_)))
                    .or_else(|| {
                        made.iter()
                            .filter_map(|(a, m)| match m {
                                Made::Assigned(q) => Some((a, *q)),
                                Made::Named(_) => None,
                            })
                            .max_by(|x, y| x.1.total_cmp(&y.1))
                            .and_then(|(best, _)| made.iter().find(|(a, _)| a == best))
                    })
                    .map(|(a, _)| a.clone())
                    .unwrap_or_default();
                let assignment = with_the_rest(planned, base);
                if !made.iter().any(|(a, _)| *a == assignment) {
                    made.push((assignment, Made::Named(1.0)));
                }
            }
            for (assignment, fit) in plan_searches(fields, &page.plan, page.observation) {
                if !made.iter().any(|(a, _)| *a == assignment) {
                    made.push((assignment, Made::Named(fit)));
                }
            }
            // The button of the form that does the plan's act, where it is another than the
            // form's first ("Publish" beside "Save draft"): the best fills again, sent by it.
            let acting = acting_submit(page, fields, submit);
            let best: Vec<(Vec<FieldValue>, Made)> = match acting {
                Some(_) => made
                    .iter()
                    .filter(|(_, m)| matches!(m, Made::Named(_)))
                    .chain(
                        made.iter()
                            .filter(|(_, m)| matches!(m, Made::Assigned(_)))
                            .take(2),
                    )
                    .map(|(a, m)| (a.clone(), m.clone()))
                    .collect(),
                None => Vec::new(),
            };
            for (assignment, made) in made {
                if let Some(fill) = self.form_fill(page, fields, submit, assignment, made) {
                    scored.push(fill);
                }
            }
            if let Some(acting) = acting {
                for (assignment, made) in best {
                    if let Some(mut fill) =
                        self.form_fill(page, fields, Some(acting), assignment, made)
                    {
                        fill.affinity += super::plan::PLAN_FILL_LIFT;
                        fill.candidate
                            .why
                            .0
                            .push((signals::PLAN_SETS, super::plan::PLAN_FILL_LIFT));
                        scored.push(fill);
                    }
                }
            }
        }
    }

    /// One assignment of a form's fields as a candidate, `None` when it cannot be sent.
    fn form_fill(
        &self,
        page: &PageRead<'_>,
        fields: &[&Element],
        submit: Option<&Element>,
        mut assignment: Vec<FieldValue>,
        made: Made,
    ) -> Option<Scored> {
        if assignment.is_empty() {
            return None;
        }
        if submit.is_none() {
            // Enter is pressed in the field typed last: a single-line one (in a <textarea>
            // it types a line break), or none.
            let multiline: Vec<Target> = fields
                .iter()
                .filter(|f| f.tag == "textarea")
                .map(|f| target_of(f))
                .collect();
            let last = assignment
                .iter()
                .rposition(|f| f.select || !multiline.contains(&f.target))?;
            let field = assignment.remove(last);
            assignment.push(field);
        }
        let form = fields[0].form.as_ref();
        let names: Vec<String> = assignment.iter().map(|f| f.target.name.clone()).collect();
        let risk = form_risk(fields, submit, &assignment);
        let form_text = format!(
            "{} {} {}",
            form.map_or("", |f| f.name.as_str()),
            submit.map_or("", |s| s.name.as_str()),
            names.join(" ")
        );
        let kept = fields
            .iter()
            .filter(|f| assignment.iter().any(|a| a.target == target_of(f)))
            .map(|f| page.kept(f))
            .fold(1.0, f64::min);
        let (affinity, why) = match made {
            Made::Assigned(quality) => {
                let words = FORM_WORDS_SHARE * self.similarity(&page.goal, &form_text);
                let fit = (1.0 - FORM_WORDS_SHARE) * quality;
                let affinity = kept * (words + fit);
                let why = Why(vec![
                    ("form_words", words),
                    ("values_fit", fit),
                    ("prefilled", affinity - (words + fit)),
                ]);
                (affinity, why)
            }
            Made::Named(fit) => {
                let affinity = kept * NAMED_FIELDS_AFFINITY * fit;
                (affinity, Why::single("goal_names_fields", affinity))
            }
        };
        let (affinity, why) = self.plan_fill_lift(page, fields, &assignment, affinity, why);
        let key = action_key(&format!("fill {} {}", form_text, names.join(" ")));
        let action = Action::FillForm {
            fields: assignment,
            submit: submit.map(target_of),
        };
        Some(Scored::new(candidate(action, risk, key), affinity, why))
    }

    /// Fields outside a form (and those of an implicit one), one at a time: a value typed, or
    /// typed and sent with Enter as a search box wants; a list's option chosen.
    fn loose_fills(&self, page: &PageRead<'_>, scored: &mut Vec<Scored>) {
        let observation = page.observation;
        // Spare words go into fields of a form-like page only (two text fields or more): a
        // lone search box is not to be filled with every word of the goal.
        let form_like = observation
            .elements
            .iter()
            .filter(|e| is_text_field(e))
            .count()
            >= 2;
        let spare: &[String] = if form_like { &page.spare } else { &[] };
        for (index, element) in loose_fields(observation) {
            let sources = super::fill::credentials_stay_home(&page.sources, &[element], page.task);
            for (assignment, quality) in self.assignments(&[element], &sources, spare, &page.goal) {
                let Some(field) = assignment.into_iter().next() else {
                    continue;
                };
                // A field that holds the value already, whole or in a suggestion chosen for
                // it ("LIH" in "Kauai Island/Lihue, HI (LIH)"): typing it again undoes the
                // choice at best.
                if let FillValue::Literal(text) = &field.value
                    && holds_already(observation, element, text)
                {
                    continue;
                }
                let likeness =
                    FORM_WORDS_SHARE * self.mixed_affinity(&page.goal, &page.task.goal, element);
                let fit = (1.0 - FORM_WORDS_SHARE) * quality;
                let position = page.positions[index];
                for (action, shape, weight) in field_variants(element, field) {
                    let risk = risk::classify(shape, &element_context(element));
                    let affinity = weight * page.kept(element) * (likeness + fit + position);
                    let why = Why(vec![
                        (GOAL_SIMILARITY, likeness),
                        ("values_fit", fit),
                        ("position", position),
                        ("enter_or_prefilled", affinity - (likeness + fit + position)),
                    ]);
                    let key = action_key(&format!("fill {} {}", element.name, action.label()));
                    scored.push(Scored::new(candidate(action, risk, key), affinity, why));
                }
            }
        }
    }
}

impl<E: Embedder> DefaultPolicy<E> {
    /// A fill's affinity moved by what sending it does to the goal's plan: lifted per unmet
    /// condition its fields would hold, held back per met one it would send without.
    fn plan_fill_lift(
        &self,
        page: &PageRead<'_>,
        fields: &[&Element],
        assignment: &[FieldValue],
        affinity: f64,
        mut why: Why,
    ) -> (f64, Why) {
        let mut effect = page.plan.fill(fields, assignment, page.observation);
        let form = fields.first().and_then(|f| f.form.as_ref());
        let submit = form.and_then(|f| f.submit_name.as_deref()).unwrap_or("");
        effect.off_login = page.plan.off_login(&page.task.goal, submit)
            || fields
                .iter()
                .any(|f| page.plan.off_login(&page.task.goal, &f.name));
        let sets = self.weights.of(signals::PLAN_SETS)
            * super::plan::PLAN_FILL_LIFT
            * effect.sets.len() as f64;
        let undone =
            effect.drops.len() + usize::from(effect.other_record) + usize::from(effect.off_login);
        let factor = super::plan::PLAN_UNDO_FACTOR
            .powi(undone as i32)
            .powf(self.weights.of(signals::PLAN_UNSETS));
        let lifted = (affinity + sets) * factor;
        if sets > 0.0 {
            why.0.push((signals::PLAN_SETS, sets));
        }
        if factor < 1.0 {
            why.0
                .push((signals::PLAN_UNSETS, lifted - (affinity + sets)));
        }
        (lifted, why)
    }
}

/// A search box of the form typed with the words of the record the plan is after ("whale"
/// for "the book about hunting a whale"), where the page does not show it: one assignment
/// per word, the most telling first.
fn plan_searches(
    fields: &[&Element],
    plan: &super::plan::PlanPage,
    observation: &Observation,
) -> Vec<(Vec<FieldValue>, f64)> {
    let Some(search) = fields.iter().find(|f| is_search_box(f) && !f.unsent) else {
        return Vec::new();
    };
    let holds = |word: &str| {
        observation.values.iter().any(|v| {
            v.kind == PageValueKind::Field
                && v.label == search.name
                && v.value.eq_ignore_ascii_case(word)
        })
    };
    plan.search_words()
        .into_iter()
        .filter(|w| !holds(w))
        .take(3)
        .enumerate()
        .map(|(n, word)| {
            let fit = [1.0, 0.7, 0.5][n];
            (vec![super::field_kind::typed(search, word)], fit)
        })
        .collect()
}

/// `planned` with the values of `other` for the fields it leaves alone, a value it places
/// elsewhere not typed twice.
fn with_the_rest(mut planned: Vec<FieldValue>, other: Vec<FieldValue>) -> Vec<FieldValue> {
    let rest: Vec<FieldValue> = other
        .into_iter()
        .filter(|o| {
            !planned
                .iter()
                .any(|p| p.target == o.target || p.value == o.value)
        })
        .collect();
    planned.extend(rest);
    planned
}

/// A visible button of the form (not its first submit) whose name says the plan's act
/// ("Publish" for a goal that publishes, "Delete" for one that deletes).
fn acting_submit<'a>(
    page: &PageRead<'a>,
    fields: &[&Element],
    submit: Option<&Element>,
) -> Option<&'a Element> {
    use forager_protocol::plan::Act;
    let form = fields.first()?.form.as_ref()?;
    let verbs: &[&str] = match page.plan.plan.act {
        Act::Publish => &["publish"],
        Act::Unpublish => &["unpublish"],
        Act::Delete => &["delete", "remove"],
        Act::Comment => &["comment", "post", "reply", "add"],
        _ => return None,
    };
    page.observation.elements.iter().find(|e| {
        (e.role.contains("button") || e.role == "menuitem")
            && !e.disabled
            && e.form.as_ref().is_some_and(|f| f.selector == form.selector)
            && submit.is_none_or(|s| !std::ptr::eq(s, *e) && s.name != e.name)
            && crate::embed::words(&e.name)
                .next()
                .is_some_and(|w| verbs.contains(&w.as_str()))
    })
}

/// The risk context of one control, by what it is and what it sends.
fn element_context(element: &Element) -> RiskContext<'_> {
    RiskContext {
        accessible_name: &element.name,
        role: &element.role,
        input_type: &element.input_type,
        sends: Some(&element.sends),
        ..RiskContext::default()
    }
}

/// The risk of clicking a control, its form's submission included.
fn click_risk(element: &Element) -> RiskClass {
    let context = RiskContext {
        form_submit_name: element.form.as_ref().and_then(|f| f.submit_name.as_deref()),
        form_posts: element.form.as_ref().is_some_and(|f| f.posts),
        ..element_context(element)
    };
    risk::classify(ActionShape::Click, &context)
}

/// The risk of sending a form with this assignment: by its submit control, or by Enter in
/// the last field; at least an authenticated read where it holds a password.
fn form_risk(
    fields: &[&Element],
    submit: Option<&Element>,
    assignment: &[FieldValue],
) -> RiskClass {
    let form = fields[0].form.as_ref();
    let sends = match submit {
        Some(submit) => submit.sends.clone(),
        None => assignment
            .last()
            .map(|f| f.target.sends.clone())
            .unwrap_or_default(),
    };
    let password = fields.iter().any(|f| f.input_type == "password");
    let context = RiskContext {
        accessible_name: submit.map_or("", |s| s.name.as_str()),
        role: "button",
        input_type: if password { "password" } else { "text" },
        form_submit_name: form.and_then(|f| f.submit_name.as_deref()),
        form_posts: form.is_some_and(|f| f.posts),
        dialog_text: "",
        sends: Some(&sends),
    };
    let shape = if submit.is_some() {
        ActionShape::Click
    } else {
        ActionShape::Fill { enter: true }
    };
    let risk = risk::classify(shape, &context);
    if password {
        risk.max(RiskClass::AuthenticatedRead)
    } else {
        risk
    }
}

/// Whether a field takes a fill: enabled, writable, a text field or a list.
fn fillable(element: &Element) -> bool {
    (is_text_field(element) || element.role == "combobox") && !element.disabled && !element.readonly
}

/// The fillable fields of each form, by the form's selector.
fn fields_by_form(observation: &Observation) -> BTreeMap<String, Vec<&Element>> {
    let mut forms: BTreeMap<String, Vec<&Element>> = BTreeMap::new();
    for element in observation.elements.iter().filter(|e| fillable(e)) {
        if let Some(form) = &element.form {
            forms
                .entry(form.selector.clone())
                .or_default()
                .push(element);
        }
    }
    forms
}

/// The fillable fields typed one at a time: those outside a form, and an implicit form's.
fn loose_fields(observation: &Observation) -> impl Iterator<Item = (usize, &Element)> {
    observation
        .elements
        .iter()
        .enumerate()
        .filter(|(_, e)| fillable(e) && e.form.as_ref().is_none_or(|f| f.implicit))
}

/// A form's submit control: a button, or in an implicit form a clickable that reads like one
/// ("Submit" on a <div> the page listens to), named as the form's submit.
fn submit_control<'a>(observation: &'a Observation, fields: &[&Element]) -> Option<&'a Element> {
    let form = fields[0].form.as_ref()?;
    observation.elements.iter().find(|e| {
        (e.role == "button" || (e.role == "clickable" && form.implicit))
            && e.form.as_ref().is_some_and(|f| f.selector == form.selector)
            && form.submit_name.as_deref().is_some_and(|n| n == e.name)
    })
}

/// The actions a single field's value makes: a list's option chosen; a text typed (its value
/// is part of the state, so the next step can be a click on the page's own button), or typed
/// and sent with Enter (not in a <textarea>, where Enter is a line break). Each with its
/// weight.
fn field_variants(element: &Element, field: FieldValue) -> Vec<(Action, ActionShape, f64)> {
    if field.select {
        let option = match &field.value {
            FillValue::Literal(text) => text.clone(),
            FillValue::Input(name) => name.clone(),
        };
        let action = Action::Select {
            target: field.target,
            option,
        };
        return vec![(action, ActionShape::Select, 1.0)];
    }
    [false, true]
        .into_iter()
        .filter(|enter| !enter || element.tag != "textarea")
        .map(|enter| {
            let action = Action::Fill {
                target: field.target.clone(),
                value: field.value.clone(),
                enter,
            };
            let weight = if enter { ENTER_WEIGHT } else { 1.0 };
            (action, ActionShape::Fill { enter }, weight)
        })
        .collect()
}

/// A list that holds several choices at once (`<select multiple>`): every option the goal
/// names, chosen in one action.
fn named_options_selections(page: &PageRead<'_>) -> Vec<Scored> {
    let mut scored = Vec::new();
    for (index, element) in page.observation.elements.iter().enumerate() {
        if element.disabled || element.role != "listbox" || element.options.is_empty() {
            continue;
        }
        let named = named_options(&element.options, &page.task.goal);
        if named.is_empty() {
            continue;
        }
        let key = action_key(&format!("select {} {}", element.name, named.join(" ")));
        let action = Action::Select {
            target: target_of(element),
            option: named.join(MULTIPLE_OPTIONS),
        };
        let position = page.positions[index];
        let why = Why(vec![
            ("names_options", NAMED_OPTIONS_AFFINITY),
            ("position", position),
        ]);
        let affinity = NAMED_OPTIONS_AFFINITY + position;
        scored.push(Scored::new(
            candidate(action, RiskClass::ReadOnly, key),
            affinity,
            why,
        ));
    }
    scored
}

/// The choices the goal names that are not made yet, made in one action (two or more: one
/// is a click). Clicked one at a time they commute, and the search would spend its budget on
/// their orders. Or the toggles the goal quotes on all the items of someone it names ("Like"
/// on all posts by @aliquam), not pressed yet; or, failing those, every shape the goal names
/// ("all the shades of red"); or, where the goal gives their number ("on 2 posts by
/// @gravida"), the first of them that make it up. Aside: a state's value is not its compound
/// action's.
fn choices_check(page: &PageRead<'_>) -> Option<Scored> {
    let (observation, choices) = (page.observation, &page.choices);
    let mut unmade: Vec<&Element> = observation
        .elements
        .iter()
        .filter(|e| {
            is_choice(e) && !e.disabled && !e.checked && names_phrase(&choices.goal_words, &e.name)
        })
        .collect();
    let count = item_count(&choices.goal_words);
    if unmade.is_empty() && (count.is_some() || choices.goal_words.contains(" all ")) {
        let theirs: Vec<&Element> = quoted_item_toggles(observation, page.reading)
            .filter(|(_, theirs)| *theirs)
            .map(|(e, _)| e)
            .collect();
        let left = count.map_or(theirs.len(), |n| {
            n.saturating_sub(theirs.iter().filter(|e| e.checked).count())
        });
        unmade = theirs
            .into_iter()
            .filter(|e| !e.checked && !e.disabled)
            .take(left)
            .collect();
        if unmade.is_empty() && count.is_none() {
            unmade = observation
                .elements
                .iter()
                .filter(|e| named_shape(e, choices) && !e.checked && !e.disabled)
                .collect();
        }
    }
    // Pressed in turn on one page: a link that navigates would leave it at the first.
    unmade.retain(|e| stays_on_page(e));
    if unmade.len() < 2 || choices.undoing {
        return None;
    }
    let action = Action::Check {
        targets: unmade.iter().map(|e| target_of(e)).collect(),
    };
    let key = action_key(&action.label());
    let why = Why::single("goal_names_choices", COMPOUND_AFFINITY);
    Some(Scored::aside(
        candidate(action, clicks_risk(&unmade), key),
        COMPOUND_AFFINITY,
        why,
    ))
}

/// The same control ("+") in each item the goal names, pressed once in each, in one action:
/// one at a time the presses commute, and the search spends its budget on their orders and on
/// undoing them. Where the goal counts ("Order 2 items that are vegan"), only as many items
/// as it counts.
fn item_checks(page: &PageRead<'_>) -> Vec<Scored> {
    let mut by_name: Vec<(&str, &str, Vec<&Element>)> = Vec::new();
    for (element, share) in page.observation.elements.iter().zip(&page.item_shares) {
        if *share < 1.0 {
            continue;
        }
        match by_name
            .iter_mut()
            .find(|(role, name, _)| *role == element.role && *name == element.name)
        {
            Some((_, _, members)) => members.push(element),
            None => by_name.push((&element.role, &element.name, vec![element])),
        }
    }
    let mut checks = Vec::new();
    for (_, _, mut members) in by_name {
        members.retain(|e| stays_on_page(e));
        if let Some(n) = page.goal_count {
            members.truncate(n as usize);
        }
        if members.len() < 2 || page.goal_count.is_some_and(|n| members.len() < n as usize) {
            continue;
        }
        let records: Vec<&str> = members.iter().map(|e| e.record.as_str()).collect();
        let key = action_key(&format!(
            "press {} in {}",
            members[0].name,
            records.join(" | ")
        ));
        let action = Action::Check {
            targets: members.iter().map(|e| target_of(e)).collect(),
        };
        let why = Why::single("item_named", COMPOUND_AFFINITY);
        checks.push(Scored::aside(
            candidate(action, clicks_risk(&members), key),
            COMPOUND_AFFINITY,
            why,
        ));
    }
    checks
}
