//! Commands typed at a terminal in the page ([`Terminal`]), read off its transcript as a
//! person learns a shell they have never seen: the words it says to type ("Type help for a
//! list of available commands"), the commands its help lists ("Usage: ls", "Usage: rm file":
//! a word after the command is an argument to give), and, for a command that takes one, each
//! word the commands run so far printed (a listing's file names), in the order of their fit to
//! the goal. Every command is typed and sent with Enter ([`Action::Fill`], key by key: see
//! `Tab::fill`). A command without an argument is not proposed again until one with an
//! argument has run: it would print what it printed.
//!
//! A command's risk is read off the words its help gives it ("rm: remove entries" is
//! destructive); one that takes an argument is at least a draft write, since a terminal runs
//! whatever it is told.

use crate::environment::Why;
use forager_protocol::action::ActionShape;
use forager_protocol::observation::Terminal;
use forager_protocol::risk::{self, RiskContext};
use forager_protocol::{Action, FillValue, RiskClass, Target};
use std::collections::HashMap;

/// The affinity of a command the transcript teaches that takes no argument ("help", "ls"):
/// each is worth one try, as a person reads the help before anything else.
pub(super) const TAUGHT_AFFINITY: f64 = 0.5;

/// The affinity of a command with an argument the goal names (a file "ending with .rb" for
/// "code.rb"): above any command without one, which only shows more.
pub(super) const FITTING_ARGUMENT_AFFINITY: f64 = 1.0;

/// The affinity of a command with any other printed word as its argument: tried after those
/// that fit, before nothing (a goal may name its object in words the eyes do not read).
pub(super) const OTHER_ARGUMENT_AFFINITY: f64 = 0.1;

/// At most this many printed words are tried as a command's argument.
const MAX_ARGUMENTS: usize = 30;

/// A command to type, its risk, its affinity and why.
pub(super) struct Command {
    pub action: Action,
    pub risk: RiskClass,
    pub affinity: f64,
    pub why: Why,
}

/// A command the transcript teaches, and how many arguments its usage line gives it.
#[derive(Debug, PartialEq)]
struct Taught {
    command: String,
    arguments: usize,
}

/// What a transcript says: the commands run, the commands it teaches, what its help says each
/// is for, and the words the commands printed.
#[derive(Debug, Default)]
struct Session<'a> {
    runs: Vec<&'a str>,
    taught: Vec<Taught>,
    descriptions: HashMap<String, String>,
    /// Words printed by the commands run (not help, usage or errors), in order, once each.
    printed: Vec<String>,
}

impl<'a> Session<'a> {
    /// Reads a transcript whose last line is the prompt waiting for a command: a line that
    /// starts with the prompt is a command run, the lines after it until the next are what it
    /// printed, the lines before the first are the terminal's greeting.
    fn read(transcript: &'a [String]) -> Session<'a> {
        let mut session = Session::default();
        let Some((prompt, lines)) = transcript.split_last() else {
            return session;
        };
        let prompt = prompt.trim();
        let mut output_lines = Vec::new();
        for line in lines {
            let line = line.trim();
            if let Some(command) = line.strip_prefix(prompt).filter(|_| !prompt.is_empty()) {
                session.runs.push(command.trim());
                continue;
            }
            if !session.learn(line) && !session.runs.is_empty() {
                output_lines.push(line);
            }
        }
        let mut printed: Vec<String> = Vec::new();
        for word in output_lines
            .iter()
            .filter(|l| !is_error(l))
            .flat_map(|l| l.split_whitespace())
            .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ';' | '"' | '\'' | '`')))
        {
            let known = session.taught.iter().any(|t| t.command == word);
            if !word.is_empty() && !known && !printed.iter().any(|p| p == word) {
                printed.push(word.to_string());
            }
        }
        printed.truncate(MAX_ARGUMENTS);
        session.printed = printed;
        session
    }

    /// Learns what a line teaches (a usage line, a word to type, a command's description);
    /// whether it taught anything.
    fn learn(&mut self, line: &str) -> bool {
        let lower = line.to_lowercase();
        if let Some(usage) = lower.strip_prefix("usage:") {
            let mut words = usage.split_whitespace();
            if let Some(command) = words.next() {
                self.teach(command, words.count());
                return true;
            }
        }
        if let Some((head, description)) = lower.split_once(':')
            && !head.trim().is_empty()
            && !head.trim().contains(' ')
            && !description.trim().is_empty()
        {
            self.descriptions
                .insert(head.trim().to_string(), description.trim().to_string());
            return true;
        }
        let words: Vec<&str> = lower.split_whitespace().collect();
        let mut taught = false;
        for pair in words.windows(2) {
            let word = pair[1].trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '.' | ','));
            let command_like = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
            if matches!(pair[0], "type" | "enter" | "run") && command_like {
                self.teach(word, 0);
                taught = true;
            }
        }
        taught
    }

    fn teach(&mut self, command: &str, arguments: usize) {
        match self.taught.iter_mut().find(|t| t.command == command) {
            // A usage line knows better than a word to type.
            Some(known) => known.arguments = known.arguments.max(arguments),
            None => self.taught.push(Taught {
                command: command.to_string(),
                arguments,
            }),
        }
    }

    /// Whether the command ran since the last command with an argument: it would print what
    /// it printed then (one with an argument may change what "ls" lists).
    fn ran_lately(&self, command: &str) -> bool {
        self.runs
            .iter()
            .rev()
            .take_while(|run| !run.contains(' '))
            .any(|run| *run == command)
    }

    fn ran(&self, command: &str) -> bool {
        self.runs.contains(&command)
    }
}

/// A line that reports a failure rather than printing something.
fn is_error(line: &str) -> bool {
    let lower = line.to_lowercase();
    lower.starts_with("error") || lower.contains("not found") || lower.contains("no such")
}

/// How well a printed word fits as the object the goal names: 1 when the goal names it, ends
/// with a suffix the goal gives (".rb" for "code.rb"), or asks for a name without an
/// extension and it has none; 0 otherwise.
fn argument_fit(word: &str, goal: &str) -> f64 {
    let goal = goal.to_lowercase();
    let word = word.to_lowercase();
    let tokens: Vec<&str> = goal
        .split_whitespace()
        .map(|t| t.trim_end_matches([',', ';', ':', '!', '?', '"']))
        .map(|t| {
            if t.len() > 2 {
                t.trim_end_matches('.')
            } else {
                t
            }
        })
        .collect();
    let named = tokens.contains(&word.as_str());
    let suffix = tokens
        .iter()
        .any(|t| t.len() >= 2 && t.starts_with('.') && word.ends_with(t));
    let bare = goal.contains("extension")
        && (goal.contains(" no ") || goal.contains("without"))
        && !word.contains('.');
    if named || suffix || bare { 1.0 } else { 0.0 }
}

/// The commands to type at each terminal of the page.
pub(super) fn commands(terminals: &[Terminal], goal: &str) -> Vec<Command> {
    let mut out = Vec::new();
    for terminal in terminals {
        let session = Session::read(&terminal.transcript);
        let target = Target {
            locators: terminal.locators.clone(),
            role: "textbox".into(),
            name: terminal.name.clone(),
            sends: Default::default(),
        };
        let typed = |text: String, arguments: bool, affinity: f64, why: Why| {
            let command = text.split_whitespace().next().unwrap_or_default();
            let description = session.descriptions.get(command).map_or("", String::as_str);
            let words = format!("{description} {command}");
            let context = RiskContext {
                role: "textbox",
                form_submit_name: Some(&words),
                ..RiskContext::default()
            };
            let risk = risk::classify(ActionShape::Fill { enter: true }, &context);
            let risk = if arguments {
                risk.max(RiskClass::DraftWrite)
            } else {
                risk
            };
            Command {
                action: Action::Fill {
                    target: target.clone(),
                    value: FillValue::Literal(text),
                    enter: true,
                },
                risk,
                affinity,
                why,
            }
        };
        for taught in &session.taught {
            if taught.arguments == 0 {
                if !session.ran_lately(&taught.command) {
                    let why = Why::single("terminal_taught", TAUGHT_AFFINITY);
                    out.push(typed(taught.command.clone(), false, TAUGHT_AFFINITY, why));
                }
                continue;
            }
            // One argument: a printed word. Commands of more are not guessed.
            if taught.arguments > 1 {
                continue;
            }
            for word in &session.printed {
                let text = format!("{} {word}", taught.command);
                if session.ran(&text) {
                    continue;
                }
                let fit = argument_fit(word, goal);
                let affinity = if fit > 0.0 {
                    FITTING_ARGUMENT_AFFINITY * fit
                } else {
                    OTHER_ARGUMENT_AFFINITY
                };
                let why = Why::single("terminal_argument_fit", affinity);
                out.push(typed(text, true, affinity, why));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::action::Locator;

    /// MiniWoB++'s terminal, as observe.js reads it, after the commands given.
    fn terminal(lines: &[&str]) -> Terminal {
        let mut transcript = vec![
            "terminal".to_string(),
            "Welcome! Type help for a list of available commands.".to_string(),
            "Last login: Fri Jan 02 2026".to_string(),
        ];
        transcript.extend(lines.iter().map(|l| l.to_string()));
        transcript.push("user$".into());
        Terminal {
            name: "terminal".into(),
            locators: vec![Locator::Css("#terminal-target".into())],
            transcript,
        }
    }

    const HELP: &[&str] = &[
        "user$ help",
        "ls: list contents",
        "Usage: ls",
        "rm: remove entries",
        "Usage: rm file",
    ];

    fn typed(commands: &[Command]) -> Vec<(String, f64)> {
        commands
            .iter()
            .map(|c| match &c.action {
                Action::Fill {
                    value: FillValue::Literal(text),
                    enter: true,
                    ..
                } => (text.clone(), c.affinity),
                other => panic!("not a command: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_fresh_terminal_is_asked_for_the_help_it_offers() {
        let goal = "Use the terminal below to delete a file ending with the extension .rb";
        let commands = commands(&[terminal(&[])], goal);
        assert_eq!(
            typed(&commands),
            vec![("help".to_string(), TAUGHT_AFFINITY)]
        );
        assert_eq!(commands[0].risk, RiskClass::ReadOnly);
    }

    #[test]
    fn the_help_teaches_commands_and_a_listing_gives_their_arguments() {
        let goal = "Use the terminal below to delete a file ending with the extension .rb";
        let after_help = typed(&commands(&[terminal(HELP)], goal));
        // "ls"; not "help", run last; no argument printed yet for "rm".
        assert_eq!(after_help, vec![("ls".to_string(), TAUGHT_AFFINITY)]);
        let mut lines = HELP.to_vec();
        lines.extend(["user$ ls", "bash.sh code.rb index.html sys32"]);
        let listed = commands(&[terminal(&lines)], goal);
        let typed = typed(&listed);
        assert!(
            !typed.iter().any(|(t, _)| t == "ls" || t == "help"),
            "ran already: {typed:?}"
        );
        let best = typed
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(t, _)| t.as_str());
        assert_eq!(best, Some("rm code.rb"));
        let others: Vec<&str> = typed
            .iter()
            .filter(|(t, a)| t.starts_with("rm ") && *a == OTHER_ARGUMENT_AFFINITY)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(others, vec!["rm bash.sh", "rm index.html", "rm sys32"]);
        // "rm: remove entries": destroying data.
        let rm = listed
            .iter()
            .find(|c| matches!(&c.action, Action::Fill { value: FillValue::Literal(t), .. } if t == "rm code.rb"));
        assert_eq!(rm.map(|c| c.risk), Some(RiskClass::Destructive));
    }

    #[test]
    fn a_goal_without_an_extension_fits_a_bare_name() {
        let goal = "Use the terminal below to delete a file that has no file extension.";
        assert_eq!(argument_fit("sys32", goal), 1.0);
        assert_eq!(argument_fit("code.rb", goal), 0.0);
        let with = "Use the terminal below to delete a file ending with the extension .tar.gz";
        assert_eq!(argument_fit("memes.tar.gz", with), 1.0);
        assert_eq!(argument_fit("memes.zip", with), 0.0);
        assert_eq!(argument_fit("sys32", with), 0.0);
    }

    #[test]
    fn errors_and_help_give_no_arguments() {
        let goal = "delete the file ending with .rb";
        let mut lines = HELP.to_vec();
        lines.extend(["user$ rm nothing.rb", "error: file 'nothing.rb' not found."]);
        let typed = typed(&commands(&[terminal(&lines)], goal));
        assert!(
            !typed.iter().any(|(t, _)| t.starts_with("rm ")),
            "{typed:?}"
        );
        // After a command with an argument, a listing may differ: "ls" and "help" again.
        assert_eq!(typed.len(), 2, "{typed:?}");
    }

    #[test]
    fn a_transcript_without_a_prompt_line_teaches_nothing_to_run() {
        let session = Session::read(&[]);
        assert!(session.taught.is_empty() && session.runs.is_empty());
        let only_prompt = vec!["user$".to_string()];
        let session = Session::read(&only_prompt);
        assert!(session.taught.is_empty());
    }
}
