//! The mutator: a small deterministic random source and the edits it makes to an input — byte
//! flips, insertions from a dictionary of the formats' own words, deletions, repeats of a
//! chunk (long names, deep nesting), splices of two inputs, truncation. Structured enough
//! that most mutants still reach the parser's or decoder's later stages.

/// xorshift64*: deterministic for a seed, so a run can be repeated exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Applies one to four random edits to `input`, with words from `dictionary` and material
/// from `other` (another input of the same kind).
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], dictionary: &[&str]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        edit(rng, &mut out, other, dictionary);
    }
    out
}

fn edit(rng: &mut Rng, out: &mut Vec<u8>, other: &[u8], dictionary: &[&str]) {
    let at = rng.below(out.len() + 1);
    match rng.below(8) {
        0 if !out.is_empty() => {
            let i = rng.below(out.len());
            out[i] ^= 1 << rng.below(8);
        }
        1 => out.insert(at, rng.next() as u8),
        2 if !dictionary.is_empty() => {
            let word = rng.pick(dictionary).as_bytes();
            out.splice(at..at, word.iter().copied());
        }
        3 => {
            let end = (at + 1 + rng.below(16)).min(out.len());
            out.drain(at.min(end)..end);
        }
        4 => {
            // A chunk repeated: long names, long lines, deep nesting.
            let end = (at + 1 + rng.below(8)).min(out.len());
            let chunk = out[at.min(end)..end].to_vec();
            let times = [2, 16, 1000, 20_000][rng.below(4)];
            let repeated: Vec<u8> = chunk
                .iter()
                .copied()
                .cycle()
                .take(chunk.len() * times)
                .collect();
            out.splice(at..at, repeated);
        }
        5 if !other.is_empty() => {
            let from = rng.below(other.len());
            let end = (from + 1 + rng.below(64)).min(other.len());
            out.splice(at..at, other[from..end].iter().copied());
        }
        6 => out.truncate(at),
        _ if !dictionary.is_empty() => {
            // A number where one is likely to be read: extremes and off-by-ones.
            let numbers = [
                "0",
                "1",
                "4294967295",
                "4294967296",
                "18446744073709551616",
                "-1",
                "65535",
                "2147483648",
            ];
            out.splice(at..at, rng.pick(&numbers).bytes());
        }
        _ => {}
    }
}
