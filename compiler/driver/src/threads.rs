//! `--threads`: how many worker threads the simulator may use, or must use.

use std::fmt;
use std::str::FromStr;

/// `--threads N`: at most `N` threads, of which each simulation (every phase of a streamed
/// run is one) uses one per [`wsel_sim::PES_PER_THREAD`] PEs with a program, at least one.
/// `--threads =N`: exactly `N` (determinism tests, benchmarks). Either way at most one per
/// core (`session::sim_options`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads {
    pub count: usize,
    pub exact: bool,
}

impl Threads {
    /// At most `count` threads, as the program's size pays for.
    pub const fn at_most(count: usize) -> Threads {
        Threads {
            count,
            exact: false,
        }
    }
}

impl FromStr for Threads {
    type Err = String;

    fn from_str(text: &str) -> Result<Threads, String> {
        let (digits, exact) = match text.strip_prefix('=') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let count = digits.parse().map_err(|_| {
            format!("`{text}` is not a thread count: N (at most N) or =N (exactly N)")
        })?;
        Ok(Threads { count, exact })
    }
}

impl fmt::Display for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let exact = if self.exact { "=" } else { "" };
        write!(f, "{exact}{}", self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::Threads;

    #[test]
    fn a_count_or_an_exact_count() {
        assert_eq!("2".parse(), Ok(Threads::at_most(2)));
        let exact = Threads {
            count: 2,
            exact: true,
        };
        assert_eq!("=2".parse(), Ok(exact));
        assert_eq!(exact.to_string(), "=2");
        assert_eq!(Threads::at_most(8).to_string(), "8");
        assert!("two".parse::<Threads>().is_err());
        assert!("==2".parse::<Threads>().is_err());
    }
}
