//! Arithmetic a page poses in its text, solved: "3 + 5 =" asks for 8, "x - 4 = 9" for 13,
//! "7 - x = 2" for 5. The default policy offers each answer as a value a fill may type, beside
//! the goal's own values; whether the answer was right is for the page (or the success check)
//! to tell. Integers only, one operator, at most one unknown (a single letter): the problems a
//! form or a quiz shows, not a calculator. Also the parity of a number an item shows, for its
//! "Odd" and "Even" controls.

use std::sync::LazyLock;

use regex::Regex;

/// How many problems one page may pose before the rest are ignored (a page of tables is not a
/// quiz).
const MAX_PROBLEMS: usize = 4;

/// Numbers beyond this are not read (no overflow, no answers nobody types).
const MAX_OPERAND: i64 = 1_000_000_000;

/// `a op b =` (nothing but a question mark or a blank after the sign), or an equation with one
/// unknown letter on either side of the operator: `x op a = b`, `a op x = b`.
static PROBLEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        (?P<a>-?\d+|\b[a-zA-Z]\b) \s* (?P<op>[-+x×*/÷−]) \s* (?P<b>-?\d+|\b[a-zA-Z]\b)
        \s* = \s* (?P<c>-?\d+|\?|_+)? (?:\s|$)",
    )
    .expect("a valid pattern")
});

/// One problem and its answer, with the problem as the page wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solved {
    /// The problem as read ("3 + 5 =").
    pub problem: String,
    /// Its answer, as it would be typed.
    pub answer: i64,
}

/// The problems `text` poses and their answers, in the order they appear, at most
/// [`MAX_PROBLEMS`].
pub fn solve_all(text: &str) -> Vec<Solved> {
    let mut solved = Vec::new();
    for captures in PROBLEM.captures_iter(text) {
        if solved.len() >= MAX_PROBLEMS {
            break;
        }
        let (Some(a), Some(op), Some(b)) =
            (captures.name("a"), captures.name("op"), captures.name("b"))
        else {
            continue;
        };
        let c = captures
            .name("c")
            .map(|c| c.as_str())
            .filter(|c| !c.starts_with('?') && !c.starts_with('_'));
        let answer = solve(a.as_str(), op.as_str(), b.as_str(), c);
        if let Some(answer) = answer {
            solved.push(Solved {
                problem: captures[0].trim().to_owned(),
                answer,
            });
        }
    }
    solved
}

/// Whether a control named "Odd" or "Even" fits the one integer its item shows ("-3 Odd
/// Even"): `None` when the name is neither or the item shows no single integer.
pub fn parity_fits(name: &str, record: &str) -> Option<bool> {
    let odd = match name.trim().to_lowercase().as_str() {
        "odd" => true,
        "even" => false,
        _ => return None,
    };
    let mut numbers = record
        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter_map(|w| w.parse::<i64>().ok());
    let number = numbers.next()?;
    if numbers.next().is_some() {
        return None;
    }
    Some((number % 2 != 0) == odd)
}

#[derive(Clone, Copy)]
enum Term {
    Number(i64),
    Unknown,
}

fn term(text: &str) -> Option<Term> {
    if text.chars().all(|c| c.is_ascii_alphabetic()) {
        // "x" as an operator reads as a letter only between two numbers: handled by the caller.
        return Some(Term::Unknown);
    }
    let n: i64 = text.parse().ok()?;
    (n.abs() <= MAX_OPERAND).then_some(Term::Number(n))
}

fn apply(a: i64, op: char, b: i64) -> Option<i64> {
    match op {
        '+' => a.checked_add(b),
        '-' | '−' => a.checked_sub(b),
        'x' | '×' | '*' => a.checked_mul(b),
        '/' | '÷' => (b != 0 && a % b == 0).then(|| a / b),
        _ => None,
    }
}

/// `a op b = c` with at most one unknown among a, b (c is known when an unknown is there).
fn solve(a: &str, op: &str, b: &str, c: Option<&str>) -> Option<i64> {
    let op = op.chars().next()?;
    let (a, b) = (term(a)?, term(b)?);
    let c = match c {
        Some(c) => Some(match term(c)? {
            Term::Number(n) => n,
            Term::Unknown => return None,
        }),
        None => None,
    };
    match (a, b, c) {
        (Term::Number(a), Term::Number(b), None) => apply(a, op, b),
        // x op b = c
        (Term::Unknown, Term::Number(b), Some(c)) => match op {
            '+' => c.checked_sub(b),
            '-' | '−' => c.checked_add(b),
            'x' | '×' | '*' => (b != 0 && c % b == 0).then(|| c / b),
            '/' | '÷' => c.checked_mul(b),
            _ => None,
        },
        // a op x = c
        (Term::Number(a), Term::Unknown, Some(c)) => match op {
            '+' => c.checked_sub(a),
            '-' | '−' => a.checked_sub(c),
            'x' | '×' | '*' => (a != 0 && c % a == 0).then(|| c / a),
            '/' | '÷' => (c != 0 && a % c == 0).then(|| a / c),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn answers(text: &str) -> Vec<i64> {
        solve_all(text).into_iter().map(|s| s.answer).collect()
    }

    #[test]
    fn a_sum_a_difference_and_a_product_are_answered() {
        assert_eq!(answers("3 + 5 = "), vec![8]);
        assert_eq!(answers("Solve: 2 - 9 ="), vec![-7]);
        assert_eq!(answers("7 x 6 = ?"), vec![42]);
        assert_eq!(answers("12 ÷ 4 ="), vec![3]);
        assert_eq!(answers("7 / 2 ="), Vec::<i64>::new(), "no fractions");
    }

    #[test]
    fn an_unknown_on_either_side_is_solved_for() {
        assert_eq!(answers("x + 4 = 9"), vec![5]);
        assert_eq!(answers("x - 4 = 9"), vec![13]);
        assert_eq!(answers("7 - x = 2"), vec![5]);
        assert_eq!(answers("3 + x = 81"), vec![78]);
        assert_eq!(answers("Solve for x: 10 - x = 97"), vec![-87]);
    }

    #[test]
    fn prose_dates_and_finished_sums_pose_nothing() {
        assert!(answers("Select 11/25/2016 and press Submit.").is_empty());
        assert!(answers("3 + 5 = 8 is a fact").is_empty(), "nothing unknown");
        assert!(answers("a - b = c").is_empty());
        assert!(answers("Click on the 2nd item.").is_empty());
    }

    #[test]
    fn odd_and_even_fit_the_number_of_their_row() {
        assert_eq!(parity_fits("Odd", "Odd -3 Even"), Some(true));
        assert_eq!(parity_fits("Even", "Odd -3 Even"), Some(false));
        assert_eq!(parity_fits("even", "Odd 10 Even"), Some(true));
        assert_eq!(parity_fits("Odd", "Odd 0 Even"), Some(false));
        assert_eq!(parity_fits("Submit", "Odd 4 Even"), None);
        assert_eq!(
            parity_fits("Odd", "Odd 4 and 5 Even"),
            None,
            "which number?"
        );
        assert_eq!(parity_fits("Odd", "Odd Even"), None);
    }

    proptest! {
        #[test]
        fn every_posed_sum_is_answered_exactly(a in -999i64..999, b in -999i64..999, op in 0usize..3) {
            let sign = ["+", "-", "x"][op];
            let expected = [a + b, a - b, a * b][op];
            let page = format!("What is {a} {sign} {b} = ? Type it below.");
            prop_assert_eq!(answers(&page), vec![expected]);
            let equation = format!("x {sign} {b} = {expected}");
            let solved = answers(&equation);
            if op < 2 || b != 0 {
                prop_assert_eq!(solved, vec![a]);
            }
        }
    }
}
