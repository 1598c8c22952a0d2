//! What goes into a page's fields: the values a fill may type ([`DefaultPolicy::sources`]:
//! the task's inputs, the goal's values, values the page shows that the goal points at) and
//! the ways to assign them to a form's fields ([`DefaultPolicy::assignments`]), each with how
//! well it fits. A credential goes only where one is asked for (`credential.rs`).
//!
//! An assignment is one of: one field (`one_field`), the goal's spare words in fields no value
//! fits (`spare_plans`), a search box (`search_box_fills`), or each value where it fits best
//! (`greedy`). Values go where they fit best first (at least `FITS`); a labelled value goes to the
//! field of its label; a value the goal spells that no field fitted is tried in the fields
//! nothing fits, first where a field's name asks for a number (at most `MAX_LEFTOVER_PLANS`).

use super::*;

/// A label on the page ("Username: jdoe") names one of the goal's values when it is this like
/// the goal (n-grams or the model), or this like a field's name.
const PAIR_LABEL_LIKENESS: f64 = 0.35;
const PAIR_FIELD_LIKENESS: f64 = 0.6;

/// The quality of a form whose only fields are lists (nothing to type): choosing is seldom
/// the whole of a goal, so it stays below a form whose typed values fit.
const SELECTS_ONLY_QUALITY: f64 = 0.3;

/// An option the goal names by its label or value, against options only like the goal (a
/// likeness is at most 1).
pub(super) const NAMED_OPTION_SCORE: f64 = 2.0;

/// A value's fit to a field of its kind (a password into a password field, an address with
/// `@` into an email field): a whole likeness more.
const KIND_FIT: f64 = 1.0;

/// A value where its kind is not asked for (a password field for something else, a user
/// name into a record's "Name"): half a likeness less.
const MISPLACED: f64 = 0.5;

/// A password into a field that shows what is typed: never, whatever else fits.
const SECRET_SHOWN: f64 = 2.0;

/// A form's several text fields and what can go into them, read once per assignment.
struct FormFit<'a> {
    text_fields: Vec<&'a Element>,
    sources: &'a [ValueSource],
    /// Per field: the value that fits it best, each value once, with its fit (≥ [`FITS`]).
    fitted: Vec<Option<(usize, f64)>>,
    /// Per value: whether a field took it.
    taken: Vec<bool>,
    /// The lists' choices, added to every assignment.
    selects: Vec<FieldValue>,
}

impl FormFit<'_> {
    /// An assignment of the fitted values, plus what `extra` gives the fields nothing
    /// fitted; with its quality (the fitted values' fits and `gain`, per text field).
    fn assignment(
        &self,
        extra: impl Fn(usize) -> Option<FillValue>,
        gain: f64,
    ) -> (Vec<FieldValue>, f64) {
        let mut assignment = Vec::new();
        let mut quality = gain;
        for (f, field) in self.text_fields.iter().enumerate() {
            let value = match self.fitted[f] {
                Some((v, s)) => {
                    quality += s.clamp(0.0, 1.0);
                    self.sources[v].value.clone()
                }
                None => match extra(f) {
                    Some(value) => value,
                    None => continue,
                },
            };
            assignment.push(FieldValue {
                target: target_of(field),
                value,
                select: false,
            });
        }
        assignment.extend(self.selects.iter().cloned());
        (assignment, quality / self.sent_text_fields())
    }

    /// How many text fields the form sends (at least one): what a fill's quality is a share
    /// of. A field it does not send (a list's filter box) is no part of filling it.
    fn sent_text_fields(&self) -> f64 {
        self.text_fields.iter().filter(|f| !f.unsent).count().max(1) as f64
    }
}

/// The values of a task and its goal, each once, in the order they were found.
#[derive(Default)]
struct Sources(Vec<ValueSource>);

impl Sources {
    fn literal(&mut self, text: String, description: String) {
        if !text.is_empty() && !self.0.iter().any(|s| s.literal == text) {
            self.0.push(ValueSource {
                value: FillValue::Literal(text.clone()),
                description,
                literal: text,
                unseen_name: false,
                label: None,
                in_goal: false,
            });
        }
    }
}

/// A field's description for matching a value to it: its name, nearby text and type.
fn describe(field: &Element) -> String {
    format!(
        "{} {} {}",
        field.name,
        field.nearby_text,
        field.input_type.replace("text", "")
    )
}

/// Whether a value must never go into a field: a credential where none is asked for (never a
/// search box, a record's field, or any field of a form that sends by GET).
fn forbidden(field: &Element, source: &ValueSource, form_has_password: bool) -> bool {
    match &source.value {
        FillValue::Input(name) => {
            Credential::of(name).is_some_and(|kind| !kind.fits(field, form_has_password))
        }
        FillValue::Literal(_) => false,
    }
}

/// The sources a form's `fields` may take: no credential where the form would send it off
/// the task's site, or to a handler of a record (a comment's, an issue's): a login form
/// planted in a post that posts to the comment handler, or to another origin, is a
/// look-alike, whatever its fields say.
pub(super) fn credentials_stay_home<'s>(
    sources: &'s [ValueSource],
    fields: &[&Element],
    task: &TaskContext,
) -> std::borrow::Cow<'s, [ValueSource]> {
    let elsewhere = fields.iter().any(|field| match &field.sends {
        forager_protocol::Sends::Post { url } | forager_protocol::Sends::Get { url } => {
            !task.allows(url) || forager_protocol::risk::names_a_record(url)
        }
        forager_protocol::Sends::Unknown => false,
    });
    let is_credential = |s: &ValueSource| matches!(&s.value, FillValue::Input(name) if Credential::of(name).is_some());
    if !elsewhere || !sources.iter().any(is_credential) {
        return std::borrow::Cow::Borrowed(sources);
    }
    tracing::debug!(
        "a form that posts off the site or to a record's handler: no credential typed into it"
    );
    std::borrow::Cow::Owned(
        sources
            .iter()
            .filter(|s| !is_credential(s))
            .cloned()
            .collect(),
    )
}

impl<E: Embedder> DefaultPolicy<E> {
    /// The values a fill may type: the task's inputs (by name), the goal's quoted strings
    /// (described by the words before them, in the letter case the goal asks for), the values
    /// it names unquoted, and values the page shows that the goal points at: a table row or
    /// term whose label is like the goal or like a field's name, what other fields hold, and
    /// the word at a position the goal names ("the 4th word", "the last word").
    pub(super) fn sources(
        &self,
        observation: &Observation,
        task: &TaskContext,
        reading: &GoalReading,
        goal: &SparseVector,
    ) -> Vec<ValueSource> {
        let mut sources = goal_sources(observation, task, reading, &self.weights);
        self.page_sources(&mut sources, observation, task, reading, goal);
        let mut sources = sources.0;
        // The page's text without the goal, where the page prints it (a task page shows its
        // instruction, which names every name).
        let content = observation.text_excerpt.replacen(&task.goal, " ", 1);
        for source in sources.iter_mut() {
            source.label = reading
                .labelled
                .iter()
                .find(|l| reading.cased(&l.text) == source.literal)
                .map(|l| l.context.clone());
            source.in_goal = !matches!(source.value, FillValue::Input(_))
                && task.goal.contains(source.literal.as_str());
            // A recipient is typed even where the page shows the name (her own email).
            source.unseen_name = reading.names.iter().any(|n| {
                n.text == source.literal
                    && (reading.recipient(&n.text) || !shows_word(observation, &content, &n.text))
            });
        }
        sources
    }

    /// Values the page shows that the goal points at: a table row or term whose label is like
    /// the goal or like a field's name, what other fields hold, a short text the goal points
    /// at, the word at a position the goal names.
    fn page_sources(
        &self,
        sources: &mut Sources,
        observation: &Observation,
        task: &TaskContext,
        reading: &GoalReading,
        goal: &SparseVector,
    ) {
        let field_names: Vec<SparseVector> = observation
            .elements
            .iter()
            .filter(|e| is_text_field(e) && !e.name.is_empty())
            .map(|e| self.embedder.embed(&e.name))
            .collect();
        let goal_words: Vec<String> = crate::embed::words(&task.goal).collect();
        for value in observation.values.iter().take(40) {
            match value.kind {
                PageValueKind::Pair => {
                    let label = self.embedder.embed(&value.label);
                    let label_words: Vec<String> = crate::embed::words(&value.label).collect();
                    let named = (!label_words.is_empty()
                        && label_words.iter().all(|w| goal_words.contains(w)))
                        || self.similarity(goal, &value.label) >= PAIR_LABEL_LIKENESS
                        || field_names
                            .iter()
                            .any(|f| f64::from(f.cosine(&label)) >= PAIR_FIELD_LIKENESS);
                    if named {
                        sources.literal(value.value.clone(), value.label.clone());
                    }
                }
                PageValueKind::Field => {
                    sources.literal(value.value.clone(), format!("text {}", value.label))
                }
                // A list's chosen option is the list's own state, no value to copy.
                PageValueKind::Choice => {}
                // A goal that points at shown text ("type the text below"): a short block of
                // it that is neither the goal nor a button's name (a field may be named by the
                // text before it: the very text).
                PageValueKind::Paragraph
                    if reading.shown_text
                        && value.value.chars().count() <= SHOWN_TEXT_MAX_CHARS
                        && !task.goal.contains(value.value.as_str())
                        && !observation.elements.iter().any(|e| {
                            !is_text_field(e) && e.name.eq_ignore_ascii_case(&value.value)
                        }) =>
                {
                    sources.literal(reading.cased(&value.value), "text shown".into())
                }
                PageValueKind::Paragraph | PageValueKind::Count => {}
            }
        }
        for position in reading.positions.iter().filter(|p| p.kind[0] == "word") {
            for value in observation.values.iter().take(40) {
                if matches!(value.kind, PageValueKind::Pair | PageValueKind::Count) {
                    continue;
                }
                let words = words_of(&value.value);
                if let Some(i) = position.ordinal.index(words.len()) {
                    sources.literal(words[i].to_owned(), "word".into());
                }
            }
        }
    }

    /// Ways to fill a group of fields: the best assignment and, for forms with one text field,
    /// one per value source. Each comes with its match quality in [0, 1]. In a form with
    /// several fields, a field no value fits gets the goal's spare words instead, one
    /// assignment per word ("paranoid movies" for a "Genre").
    pub(super) fn assignments(
        &self,
        fields: &[&Element],
        sources: &[ValueSource],
        spare: &[String],
        goal: &SparseVector,
    ) -> Vec<(Vec<FieldValue>, f64)> {
        let text_fields: Vec<&Element> = fields
            .iter()
            .copied()
            .filter(|f| is_text_field(f))
            .collect();
        let selects = self.select_values(fields, sources, goal);
        if text_fields.is_empty() {
            return if selects.is_empty() {
                Vec::new()
            } else {
                vec![(selects, SELECTS_ONLY_QUALITY)]
            };
        }
        if sources.is_empty() && spare.is_empty() {
            return Vec::new();
        }
        let form_has_password = fields
            .iter()
            .any(|f| f.input_type.eq_ignore_ascii_case("password"));
        let score = |field: &Element, source: &ValueSource| {
            self.fit(field, source, sources, form_has_password)
        };
        if let [field] = text_fields[..] {
            return one_field(field, sources, spare, &selects, form_has_password, &score);
        }
        // Several fields. First the pairs that fit, best first, each field and value once.
        let mut pairs: Vec<(usize, usize, f64)> = Vec::new();
        for (f, field) in text_fields.iter().enumerate() {
            for (v, source) in sources.iter().enumerate() {
                pairs.push((f, v, score(field, source)));
            }
        }
        pairs.sort_by(|a, b| b.2.total_cmp(&a.2));
        let mut fitted: Vec<Option<(usize, f64)>> = vec![None; text_fields.len()];
        let mut taken = vec![false; sources.len()];
        for &(f, v, s) in &pairs {
            if s >= FITS && fitted[f].is_none() && !taken[v] {
                fitted[f] = Some((v, s));
                taken[v] = true;
            }
        }
        let form = FormFit {
            text_fields,
            sources,
            fitted,
            taken,
            selects,
        };
        let spare_all: Vec<&String> = spare
            .iter()
            .filter(|w| !sources.iter().any(|s| s.literal.eq_ignore_ascii_case(w)))
            .collect();
        if let Some(plans) = spare_plans(&form, &spare_all) {
            return plans;
        }
        if let Some(searches) = search_box_fills(&form, &spare_all) {
            return searches;
        }
        vec![greedy(&form, &score)]
    }

    /// The lists' choices: the option most like one of the task's values, else most like the
    /// goal.
    fn select_values(
        &self,
        fields: &[&Element],
        sources: &[ValueSource],
        goal: &SparseVector,
    ) -> Vec<FieldValue> {
        fields
            .iter()
            .filter(|f| f.role == "combobox" && !f.options.is_empty())
            .filter_map(|f| {
                let best = f
                    .options
                    .iter()
                    .filter(|o| !o.value.is_empty())
                    .map(|o| {
                        let by_value = sources.iter().any(|s| {
                            s.literal.eq_ignore_ascii_case(&o.label) || s.literal == o.value
                        });
                        let score = if by_value {
                            NAMED_OPTION_SCORE
                        } else {
                            self.similarity(goal, &o.label)
                        };
                        (o, score)
                    })
                    .fold(
                        None::<(&forager_protocol::observation::SelectOption, f64)>,
                        |best, (o, s)| match best {
                            Some((_, b)) if b >= s => best,
                            _ => Some((o, s)),
                        },
                    )?;
                Some(FieldValue {
                    target: target_of(f),
                    value: FillValue::Literal(best.0.value.clone()),
                    select: true,
                })
            })
            .collect()
    }

    /// How well a value fits a field: its description's likeness to the field's, raised for
    /// a password in a password field, an address in an email field, a labelled value in the
    /// field with its label, a name to type in a single-line field; lowered for credentials
    /// where none is asked; −∞ where it must never go.
    fn fit(
        &self,
        field: &Element,
        source: &ValueSource,
        sources: &[ValueSource],
        form_has_password: bool,
    ) -> f64 {
        if forbidden(field, source, form_has_password) {
            return f64::NEG_INFINITY;
        }
        let mut s = self.similarity(&self.embedder.embed(&source.description), &describe(field));
        let kind = field.input_type.as_str();
        let lower = source.description.to_lowercase();
        if kind == "password" && lower.contains("pass") {
            s += KIND_FIT;
        }
        if kind == "email" && (lower.contains("mail") || source.literal.contains('@')) {
            s += KIND_FIT;
        }
        if kind == "password" && !lower.contains("pass") {
            s -= MISPLACED;
        }
        // A value the goal labels goes where the page shows its label ("From:"), not where it
        // shows another value's.
        if let Some(label) = &source.label {
            let field_label = label_key(&field.name);
            if field_label == *label {
                s += LABEL_FIT;
            } else if sources
                .iter()
                .any(|other| other.label.as_deref() == Some(field_label.as_str()))
            {
                s -= LABEL_FIT;
            }
        }
        // A name to type fits any single-line field at least a little (a "to" the goal does
        // not say: "send Marlena the email").
        if source.unseen_name && field.tag != "textarea" && kind != "password" {
            s = s.max(UNSEEN_NAME_FIT);
        }
        // Credentials go where credentials are asked for: a password never into a field that
        // shows it, a user name not into a record's "Name" (a group named "editors").
        let field_text = describe(field).to_lowercase();
        if lower.contains("pass") && kind != "password" {
            s -= SECRET_SHOWN;
        }
        let credential_field = ["user", "login", "mail", "account", "identifier"]
            .iter()
            .any(|w| field_text.contains(w));
        if (lower.contains("user") || lower.contains("login")) && !credential_field {
            s -= MISPLACED;
        }
        s
    }
}

/// The values the task and its goal give: inputs, quoted and labelled values, tokens, a small
/// range's numbers, names (not a control's), the answer to the page's arithmetic, a count the
/// goal asks for.
fn goal_sources(
    observation: &Observation,
    task: &TaskContext,
    reading: &GoalReading,
    weights: &super::signals::Weights,
) -> Sources {
    let mut sources = Sources(
        task.inputs
            .iter()
            .map(|(name, value)| ValueSource {
                value: FillValue::Input(name.clone()),
                description: name.replace(['_', '-'], " "),
                literal: value.clone(),
                unseen_name: false,
                label: None,
                in_goal: false,
            })
            .collect(),
    );
    for quoted in &reading.quoted {
        if !quotes_a_button(quoted, observation) {
            let description = format!("{} {}", quoted.context, quoted.text);
            sources.literal(reading.cased(&quoted.text), description);
        }
    }
    for labelled in &reading.labelled {
        let description = format!("{} {}", labelled.context, labelled.text);
        sources.literal(reading.cased(&labelled.text), description);
    }
    for token in &reading.tokens {
        // With the words before it ("from year 2016"), which say which field it is for.
        sources.literal(token.clone(), words_before(&task.goal, token));
    }
    // A small range the goal names ("a number between 0-9"): each of its numbers is a value
    // to try, and the page's answer (or the success check) tells which one.
    for &(low, high) in &reading.ranges {
        if high - low <= MAX_RANGE_VALUES {
            for n in low..=high {
                sources.literal(n.to_string(), format!("number {n}"));
            }
        }
    }
    for name in &reading.names {
        // "press Submit" names a control, not a value.
        let a_control = observation
            .elements
            .iter()
            .any(|e| e.name.eq_ignore_ascii_case(&name.text));
        if !a_control {
            sources.literal(name.text.clone(), format!("{} {}", name.context, name.text));
        }
    }
    // Arithmetic the page poses ("3 + 5 =", "x - 4 = 9"): its answer is a value to type.
    let posed = if weights.on(super::families::PAGE_ARITHMETIC) {
        crate::arithmetic::solve_all(&observation.text_excerpt)
    } else {
        Vec::new()
    };
    for solved in posed {
        let description = format!("answer result number {}", solved.problem);
        sources.literal(solved.answer.to_string(), description);
    }
    // A number of things the goal asks for ("the total number of blocks"): the page's shown
    // elements of that kind, counted.
    let kind = counted_kind(&task.goal).filter(|_| weights.on(super::families::COUNTED_KIND));
    if let Some(kind) = kind {
        for value in &observation.values {
            if value.kind == PageValueKind::Count
                && crate::item_controls::stem(&value.label) == kind
            {
                let description = format!("answer total number count {}", value.label);
                sources.literal(value.value.clone(), description);
            }
        }
    }
    sources
}

/// One text field (a search box, say): one candidate per value; where the field is named and
/// no value fits it ("Genre" beside "year 2016" and "by Witt"), the goal's spare words.
fn one_field(
    field: &Element,
    sources: &[ValueSource],
    spare: &[String],
    selects: &[FieldValue],
    form_has_password: bool,
    score: &dyn Fn(&Element, &ValueSource) -> f64,
) -> Vec<(Vec<FieldValue>, f64)> {
    let with_selects = |value: FillValue| {
        let mut assignment = vec![FieldValue {
            target: target_of(field),
            value,
            select: false,
        }];
        assignment.extend(selects.iter().cloned());
        assignment
    };
    let mut out = Vec::new();
    for source in sources
        .iter()
        .filter(|s| !forbidden(field, s, form_has_password))
    {
        let quality = score(field, source).clamp(0.0, 1.0);
        out.push((with_selects(source.value.clone()), quality));
    }
    if !field.name.trim().is_empty() && !sources.iter().any(|source| score(field, source) >= FITS) {
        for word in spare.iter().take(MAX_SPARE_WORDS) {
            out.push((with_selects(FillValue::Literal(word.clone())), 0.0));
        }
    }
    out
}

/// Where some fields of a form fit no value and all of those say what they want ("Genre"):
/// each takes one of the goal's values no field fitted ("2012" beside "Released Date"), the
/// others a spare word in turn; or every one a spare word. `None` where that does not apply.
fn spare_plans(form: &FormFit<'_>, spare_all: &[&String]) -> Option<Vec<(Vec<FieldValue>, f64)>> {
    let (fields, sources) = (&form.text_fields, form.sources);
    // A field the form does not send (a list's filter box) takes no spare word: nothing
    // typed there reaches the server, and each word would be one more plan to try.
    let unfitted: Vec<usize> = (0..fields.len())
        .filter(|&f| form.fitted[f].is_none() && !fields[f].unsent)
        .collect();
    let spare: Vec<&String> = spare_all.iter().take(MAX_SPARE_WORDS).copied().collect();
    let leftovers: Vec<usize> = (0..sources.len())
        .filter(|&v| !form.taken[v] && sources[v].in_goal)
        .take(MAX_LEFTOVER_VALUES)
        .collect();
    // Only fields that say what they want take a spare word or a leftover value: an unnamed
    // field (a copy's target beside its sources) keeps getting the page's values.
    let applies = !unfitted.is_empty()
        && unfitted.len() < fields.len()
        && unfitted.iter().all(|&f| !fields[f].name.trim().is_empty())
        && (!spare.is_empty() || !leftovers.is_empty());
    if !applies {
        return None;
    }
    // What the unfitted fields take, in `unfitted`'s order, and what the plan gains.
    let mut plans: Vec<(Vec<Option<FillValue>>, f64)> = Vec::new();
    let spare_at = |first: usize, k: usize| {
        (k < spare.len()).then(|| FillValue::Literal(spare[(first + k) % spare.len()].clone()))
    };
    for &v in &leftovers {
        for (at, &f) in unfitted.iter().enumerate() {
            let fit = if asks_for_number(&fields[f].name) && is_number_like(&sources[v].literal) {
                NUMBER_FIELD_FIT
            } else {
                0.0
            };
            for first in 0..spare.len().max(1) {
                // The other unfitted fields take spare words, in turn.
                let plan = (0..unfitted.len())
                    .map(|k| {
                        if k == at {
                            Some(sources[v].value.clone())
                        } else {
                            spare_at(first, k - usize::from(k > at))
                        }
                    })
                    .collect();
                plans.push((plan, fit));
            }
        }
    }
    plans.sort_by(|a, b| b.1.total_cmp(&a.1));
    plans.truncate(MAX_LEFTOVER_PLANS);
    for first in 0..spare.len() {
        let plan = (0..unfitted.len()).map(|k| spare_at(first, k)).collect();
        plans.push((plan, 0.0));
    }
    let assignments = plans
        .into_iter()
        .map(|(plan, gain)| {
            let extra = |f: usize| {
                let k = unfitted.iter().position(|&u| u == f)?;
                plan[k].clone()
            };
            form.assignment(extra, gain)
        })
        .collect();
    Some(assignments)
}

/// Nothing fits any field, and the form has a search box (a data browser's table: its search
/// box beside its filter rows): the values the goal names, then its spare words (its last
/// first: the goal's object is there more often than not), go into it, one assignment each,
/// as into a lone search box. `None` where that does not apply or gives nothing.
fn search_box_fills(
    form: &FormFit<'_>,
    spare_all: &[&String],
) -> Option<Vec<(Vec<FieldValue>, f64)>> {
    if form.fitted.iter().any(Option::is_some) {
        return None;
    }
    let search = form.text_fields.iter().find(|f| is_search_box(f))?;
    let values = form
        .sources
        .iter()
        .filter(|source| matches!(source.value, FillValue::Literal(_)))
        .map(|source| source.value.clone())
        .chain(
            spare_all
                .iter()
                .rev()
                .map(|word| FillValue::Literal((*word).clone())),
        )
        .take(MAX_SPARE_WORDS);
    let out: Vec<(Vec<FieldValue>, f64)> = values
        .map(|value| {
            let mut assignment = vec![FieldValue {
                target: target_of(search),
                value,
                select: false,
            }];
            assignment.extend(form.selects.iter().cloned());
            (assignment, 0.0)
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// Greedy in the form's order, each value used once where possible; a field no value fits
/// (below zero: a credential where none is asked) stays empty.
fn greedy(
    form: &FormFit<'_>,
    score: &dyn Fn(&Element, &ValueSource) -> f64,
) -> (Vec<FieldValue>, f64) {
    let sources = form.sources;
    let mut used = vec![false; sources.len()];
    let mut assignment = Vec::new();
    let mut quality = 0.0;
    for field in &form.text_fields {
        let pick = (0..sources.len())
            .filter(|&i| !used[i] || sources.len() < form.text_fields.len())
            .map(|i| (i, score(field, &sources[i])))
            .fold(None::<(usize, f64)>, |best, (i, s)| match best {
                Some((_, b)) if b >= s => best,
                _ => Some((i, s)),
            });
        // A field the form does not send takes only a value that fits it: nothing typed
        // there reaches the server, so a value there is only one more plan to try.
        let least = if field.unsent { FITS } else { 0.0 };
        if let Some((i, s)) = pick.filter(|&(_, s)| s >= least) {
            used[i] = true;
            quality += s.clamp(0.0, 1.0);
            assignment.push(FieldValue {
                target: target_of(field),
                value: sources[i].value.clone(),
                select: false,
            });
        }
    }
    assignment.extend(form.selects.iter().cloned());
    (assignment, quality / form.sent_text_fields())
}
