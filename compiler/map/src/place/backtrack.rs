//! Depth-first search over the ways each layer of a chain can lie: the first way of every
//! layer is taken, and when a layer has none the latest layer with an untried way is moved to
//! it (its successors placed anew), within a budget of layers placed.

/// Chooses one of `ways(l, chosen)` for every layer `l < n`, where `chosen` holds the ways of
/// the layers before it, best first; at most `budget` calls of `ways`. Resumable: after a
/// complete choice, [`DepthFirst::reject`] moves a layer of it and [`DepthFirst::next`]
/// completes the choice again from there.
pub(crate) struct DepthFirst<P> {
    n: usize,
    budget: usize,
    calls: usize,
    deepest: usize,
    chosen: Vec<P>,
    /// Per chosen layer: its ways, and the one taken.
    stack: Vec<(Vec<P>, usize)>,
    /// No way is left to try.
    exhausted: bool,
}

impl<P: Copy> DepthFirst<P> {
    pub(crate) fn new(n: usize, budget: usize) -> DepthFirst<P> {
        DepthFirst {
            n,
            budget,
            calls: 0,
            deepest: 0,
            chosen: Vec::with_capacity(n),
            stack: Vec::with_capacity(n),
            exhausted: false,
        }
    }

    /// The next complete choice, each layer's first way from where the search stands; on
    /// failure, the deepest layer that found no way.
    pub(crate) fn next(
        &mut self,
        mut ways: impl FnMut(usize, &[P]) -> Vec<P>,
    ) -> Result<Vec<P>, usize> {
        if self.exhausted {
            return Err(self.deepest);
        }
        while self.chosen.len() < self.n {
            let l = self.chosen.len();
            let options = ways(l, &self.chosen);
            self.calls += 1;
            if let Some(&first) = options.first() {
                self.chosen.push(first);
                self.stack.push((options, 0));
                continue;
            }
            self.deepest = self.deepest.max(l);
            if !self.advance() {
                return Err(self.deepest);
            }
        }
        Ok(self.chosen.clone())
    }

    /// Gives up the complete choice: layer `l` takes its next way (its successors to be
    /// placed anew), or, when it has none, the latest layer before it that has one. `false`
    /// when no layer has (or the budget is spent).
    pub(crate) fn reject(&mut self, l: usize) -> bool {
        self.chosen.truncate(l + 1);
        self.stack.truncate(l + 1);
        self.advance()
    }

    /// Moves the latest chosen layer that has another way to it.
    fn advance(&mut self) -> bool {
        loop {
            let Some((options, taken)) = self.stack.last_mut() else {
                self.exhausted = true;
                return false;
            };
            self.chosen.pop();
            if self.calls < self.budget && *taken + 1 < options.len() {
                *taken += 1;
                self.chosen.push(options[*taken]);
                return true;
            }
            self.stack.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four layers, each a number 0–2 (its ways in ascending order), where a layer may not
    /// repeat the one before it and layer 3 must be 0 and differ from layer 1: the first ways
    /// (0, 1, 0) leave layer 3 nothing, so layer 2 is moved to 2 and layer 3 still finds
    /// nothing; then layer 1 moves to 2 and (0, 2, 0, 0) fails by repetition; the search ends at
    /// (0, 2, 1, 0), hand-derived.
    fn ways(l: usize, before: &[u32]) -> Vec<u32> {
        (0..3)
            .filter(|&v| before.last() != Some(&v))
            .filter(|&v| l != 3 || (v == 0 && before[1] != 1))
            .collect()
    }

    #[test]
    fn a_dead_end_moves_the_latest_layer_with_another_way() {
        assert_eq!(DepthFirst::new(4, 100).next(ways), Ok(vec![0, 2, 1, 0]));
    }

    #[test]
    fn the_budget_ends_the_search_at_the_deepest_failure() {
        // Calls: layers 0, 1, 2, 3 (none), 3 again after moving layer 2 (none): five.
        assert_eq!(DepthFirst::new(4, 5).next(ways), Err(3));
        assert_eq!(
            DepthFirst::new(1, 10).next(|_, _: &[u32]| Vec::new()),
            Err(0)
        );
    }

    /// Three layers of two ways each (0 and 1), any combination allowed: the first choice is
    /// (0, 0, 0); rejected at layer 2, layer 2 moves: (0, 0, 1); rejected at layer 0, layer 0
    /// moves and its successors start again from their first ways: (1, 0, 0); then at layer 1,
    /// (1, 1, 0), and at layer 2, (1, 1, 1), the last: rejecting it leaves none.
    #[test]
    fn a_rejected_choice_moves_the_layer_named() {
        let two = |_: usize, _: &[u32]| vec![0, 1];
        let mut search = DepthFirst::new(3, 100);
        assert_eq!(search.next(two), Ok(vec![0, 0, 0]));
        assert!(search.reject(2));
        assert_eq!(search.next(two), Ok(vec![0, 0, 1]));
        assert!(search.reject(0));
        assert_eq!(search.next(two), Ok(vec![1, 0, 0]));
        assert!(search.reject(1));
        assert_eq!(search.next(two), Ok(vec![1, 1, 0]));
        assert!(search.reject(2));
        assert_eq!(search.next(two), Ok(vec![1, 1, 1]));
        assert!(!search.reject(2));
        assert!(search.next(two).is_err());
    }
}
