//! A sweep of the eyes' signal weights on a benchmark's training split, one signal at a time
//! (coordinate search): the base weights, then each swept signal at each of its weights over
//! the base, then the base again (the control: how much two runs of one setting differ here).
//! Each variant's episodes are tallied by success, and by actions over the episodes every
//! variant compared passed; a signal's weight is chosen where it passes most, then spends
//! fewest actions, and only where it beats the base by more than the control's difference. The choices are
//! made one signal at a time and are suggested together: they interact, so the suggestion is a
//! next base to sweep from, not a proof.

use std::collections::{BTreeMap, BTreeSet};

/// Fewer actions than the base by less than this share is noise, not a gain, however close
/// the control came to the base (the same build run twice differs by a few percent here).
pub const ACTIONS_MARGIN: f64 = 0.03;

/// The label of the control variant: the base's weights, run again last.
pub const CONTROL: &str = "base-again";

/// One setting of the weights a sweep runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// `base`, `name=weight`, or [`CONTROL`].
    pub label: String,
    /// The whole setting, as `FORAGER_WEIGHTS` takes it (`name=weight,…`, sorted by name).
    pub weights: String,
    /// The swept signal and its weight; `None` for the base and the control.
    pub signal: Option<(String, f64)>,
}

/// Why a sweep's description was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// Not `name=w,w;name=w`.
    #[error("{0:?} is not name=weight[,weight…]")]
    Malformed(String),
    /// A weight that is not a finite number at least 0.
    #[error("{0:?} is not a weight (a finite number ≥ 0)")]
    BadWeight(String),
    /// Nothing to sweep.
    #[error("no signal to sweep")]
    Empty,
}

fn parse_weight(text: &str) -> Result<f64, SweepError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|w| w.is_finite() && *w >= 0.0)
        .ok_or_else(|| SweepError::BadWeight(text.to_string()))
}

fn setting(weights: &BTreeMap<String, f64>) -> String {
    weights
        .iter()
        .map(|(name, weight)| format!("{name}={weight}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The variants of a sweep: the base (`name=weight,…`, maybe empty), then for each swept
/// signal (`name=w1,w2;other=w3`) each weight over the base, then the control ([`CONTROL`]).
/// Signal names are checked by forager itself when it runs (an unknown name is refused by
/// name).
pub fn variants(base: &str, sweep: &str) -> Result<Vec<Variant>, SweepError> {
    let mut base_weights = BTreeMap::new();
    for pair in base.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weight) = pair
            .split_once('=')
            .ok_or_else(|| SweepError::Malformed(pair.to_string()))?;
        base_weights.insert(name.trim().to_string(), parse_weight(weight)?);
    }
    let mut out = vec![Variant {
        label: "base".into(),
        weights: setting(&base_weights),
        signal: None,
    }];
    for part in sweep.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, weights) = part
            .split_once('=')
            .filter(|(name, _)| !name.trim().is_empty())
            .ok_or_else(|| SweepError::Malformed(part.to_string()))?;
        let name = name.trim();
        for weight in weights.split(',') {
            let weight = parse_weight(weight)?;
            let mut weights = base_weights.clone();
            weights.insert(name.to_string(), weight);
            out.push(Variant {
                label: format!("{name}={weight}"),
                weights: setting(&weights),
                signal: Some((name.to_string(), weight)),
            });
        }
    }
    if out.len() == 1 {
        return Err(SweepError::Empty);
    }
    out.push(Variant {
        label: CONTROL.into(),
        ..out[0].clone()
    });
    Ok(out)
}

/// One episode's outcome, as a sweep tallies it.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The task's name.
    pub task: String,
    /// The episode's seed.
    pub seed: u64,
    /// Whether it passed.
    pub passed: bool,
    /// The actions it spent.
    pub actions: u64,
}

/// A variant's tally against others: passes, episodes, and actions over the episodes all of
/// them passed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tally {
    /// Episodes passed.
    pub passed: usize,
    /// Episodes run.
    pub episodes: usize,
    /// Actions over the episodes every variant compared passed.
    pub common_actions: u64,
}

/// The tallies of some variants' outcomes, in their order.
pub fn tally(runs: &[&[Outcome]]) -> Vec<Tally> {
    let passed_by = |run: &[Outcome]| -> BTreeSet<(String, u64)> {
        run.iter()
            .filter(|o| o.passed)
            .map(|o| (o.task.clone(), o.seed))
            .collect()
    };
    let common = runs
        .iter()
        .map(|run| passed_by(run))
        .reduce(|a, b| a.intersection(&b).cloned().collect())
        .unwrap_or_default();
    runs.iter()
        .map(|run| Tally {
            passed: run.iter().filter(|o| o.passed).count(),
            episodes: run.len(),
            common_actions: run
                .iter()
                .filter(|o| common.contains(&(o.task.clone(), o.seed)))
                .map(|o| o.actions)
                .sum(),
        })
        .collect()
}

/// How far two runs of one setting came apart: passes, and the share of actions over the
/// episodes both passed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Noise {
    /// The difference in passes.
    pub passes: usize,
    /// The difference in actions, as a share of the first run's.
    pub actions: f64,
}

impl Noise {
    /// The noise between a run and the same setting's run again.
    pub fn between(first: &[Outcome], again: &[Outcome]) -> Noise {
        let t = tally(&[first, again]);
        Noise {
            passes: t[0].passed.abs_diff(t[1].passed),
            actions: t[0].common_actions.abs_diff(t[1].common_actions) as f64
                / t[0].common_actions.max(1) as f64,
        }
    }
}

/// Whether `challenger` beats `incumbent` by more than `noise`: more passes than the noise's
/// difference allows, or no fewer and fewer actions by more than the noise's share (and at
/// least [`ACTIONS_MARGIN`]).
pub fn beats(challenger: Tally, incumbent: Tally, noise: Noise) -> bool {
    let margin = noise.actions.max(ACTIONS_MARGIN);
    challenger.passed > incumbent.passed + noise.passes
        || (challenger.passed >= incumbent.passed
            && (challenger.common_actions as f64)
                < (1.0 - margin) * incumbent.common_actions as f64)
}

/// The sweep's report: every variant against the base, the control's noise, then each
/// signal's best weight and the suggested next base. `runs[i]` holds `variants[i]`'s outcomes;
/// `variants[0]` is the base.
pub fn report(variants: &[Variant], runs: &[Vec<Outcome>]) -> String {
    let mut out = String::from(
        "| variant | passed | actions over the episodes both passed (base → variant) |\n|---|---|---|\n",
    );
    let base = &runs[0];
    for (variant, run) in variants.iter().zip(runs) {
        let t = tally(&[base, run]);
        out.push_str(&format!(
            "| {} | {}/{} | {} → {} |\n",
            variant.label, t[1].passed, t[1].episodes, t[0].common_actions, t[1].common_actions
        ));
    }
    let noise = variants
        .iter()
        .position(|v| v.label == CONTROL)
        .map_or_else(Noise::default, |i| Noise::between(base, &runs[i]));
    out.push_str(&format!(
        "\nNoise (the base run again): {} passes, {:.1} % of the actions; a weight must beat the base by more (and by {:.0} % of the actions at least).\n",
        noise.passes,
        100.0 * noise.actions,
        100.0 * ACTIONS_MARGIN
    ));
    let mut signals: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, variant) in variants.iter().enumerate() {
        if let Some((name, _)) = &variant.signal {
            signals.entry(name.as_str()).or_default().push(i);
        }
    }
    let mut chosen: Vec<String> = Vec::new();
    out.push_str("\nEach signal's weight, chosen against the base:\n\n");
    for (name, indices) in &signals {
        let mut compared: Vec<&[Outcome]> = vec![base];
        compared.extend(indices.iter().map(|&i| runs[i].as_slice()));
        let tallies = tally(&compared);
        let mut best: Option<(usize, Tally)> = None;
        for (k, &t) in tallies.iter().enumerate().skip(1) {
            let incumbent = best.map_or(tallies[0], |(_, b)| b);
            if beats(t, incumbent, noise) {
                best = Some((k, t));
            }
        }
        match best {
            Some((k, t)) => {
                let label = &variants[indices[k - 1]].label;
                out.push_str(&format!(
                    "- {name}: {label} ({}/{} passed, {} actions, against {}/{}, {})\n",
                    t.passed,
                    t.episodes,
                    t.common_actions,
                    tallies[0].passed,
                    tallies[0].episodes,
                    tallies[0].common_actions
                ));
                chosen.push(label.clone());
            }
            None => out.push_str(&format!("- {name}: the base's (no weight beats it)\n")),
        }
    }
    let mut next: BTreeMap<String, String> = variants[0]
        .weights
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(n, w)| (n.to_string(), w.to_string()))
        .collect();
    for label in &chosen {
        if let Some((n, w)) = label.split_once('=') {
            next.insert(n.to_string(), w.to_string());
        }
    }
    let next: Vec<String> = next.iter().map(|(n, w)| format!("{n}={w}")).collect();
    out.push_str(&format!(
        "\nSuggested next base (one signal at a time; run it again to confirm): --weights {}\n",
        if next.is_empty() {
            "(unchanged)".to_string()
        } else {
            next.join(",")
        }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(task: &str, seed: u64, passed: bool, actions: u64) -> Outcome {
        Outcome {
            task: task.into(),
            seed,
            passed,
            actions,
        }
    }

    #[test]
    fn variants_are_the_base_then_each_weight_over_it() {
        let v = variants("b=2", "a=0,0.5; b=1").expect("a sweep");
        let labels: Vec<&str> = v.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["base", "a=0", "a=0.5", "b=1", CONTROL]);
        assert_eq!(v[4].weights, v[0].weights);
        assert_eq!(v[0].weights, "b=2");
        assert_eq!(v[1].weights, "a=0,b=2");
        assert_eq!(v[3].weights, "b=1");
        assert_eq!(variants("", ""), Err(SweepError::Empty));
        assert!(matches!(variants("", "a"), Err(SweepError::Malformed(_))));
        assert!(matches!(
            variants("", "a=-1"),
            Err(SweepError::BadWeight(_))
        ));
        assert!(matches!(variants("", "a=x"), Err(SweepError::BadWeight(_))));
        assert!(matches!(
            variants("b", "a=1"),
            Err(SweepError::Malformed(_))
        ));
    }

    #[test]
    fn actions_are_compared_over_the_episodes_all_passed() {
        let base = vec![outcome("t", 1, true, 10), outcome("t", 2, true, 50)];
        let other = vec![outcome("t", 1, true, 8), outcome("t", 2, false, 100)];
        let t = tally(&[&base, &other]);
        assert_eq!((t[0].passed, t[0].common_actions), (2, 10));
        assert_eq!((t[1].passed, t[1].common_actions), (1, 8));
        // Fewer actions do not make up for a lost episode.
        let quiet = Noise::default();
        assert!(!beats(t[1], t[0], quiet));
        assert!(beats(t[0], t[1], quiet));
        // One pass more is noise where the control came one pass apart.
        let noisy = Noise {
            passes: 1,
            actions: 0.0,
        };
        assert!(!beats(t[0], t[1], noisy));
        assert_eq!(
            Noise::between(&base, &other),
            Noise {
                passes: 1,
                actions: 0.2
            }
        );
    }

    #[test]
    fn a_weight_is_chosen_only_where_it_beats_the_base_by_more_than_noise() {
        let v = variants("", "a=0,2;b=0").expect("a sweep");
        let base = vec![outcome("t", 1, true, 100), outcome("u", 1, false, 100)];
        // a=0: as many passes, 2 % fewer actions (noise); a=2: one more pass.
        let a0 = vec![outcome("t", 1, true, 98), outcome("u", 1, false, 100)];
        let a2 = vec![outcome("t", 1, true, 100), outcome("u", 1, true, 40)];
        // b=0: as many passes, 20 % fewer actions.
        let b0 = vec![outcome("t", 1, true, 80), outcome("u", 1, false, 100)];
        let control = base.clone();
        let text = report(&v, &[base, a0, a2, b0, control]);
        assert!(text.contains("- a: a=2 (2/2 passed"), "{text}");
        assert!(text.contains("- b: b=0 (1/2 passed, 80 actions"), "{text}");
        assert!(text.contains("--weights a=2,b=0"), "{text}");
        let v = variants("", "a=0").expect("a sweep");
        let base = vec![outcome("t", 1, true, 100)];
        let a0 = vec![outcome("t", 1, true, 99)];
        let text = report(&v, &[base.clone(), a0, base.clone()]);
        assert!(text.contains("- a: the base's"), "{text}");
        assert!(text.contains("(unchanged)"), "{text}");
        // 15 % fewer actions, where the base run again came 20 % apart: noise.
        let a0 = vec![outcome("t", 1, true, 85)];
        let again = vec![outcome("t", 1, true, 120)];
        let text = report(&v, &[base, a0, again]);
        assert!(text.contains("- a: the base's"), "{text}");
        assert!(text.contains("20.0 % of the actions"), "{text}");
    }
}
