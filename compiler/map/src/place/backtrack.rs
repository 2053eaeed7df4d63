//! Depth-first search over the ways each layer of a chain can lie: the first way of every
//! layer is taken, and when a layer has none the latest layer with an untried way is moved to
//! it (its successors placed anew), within a budget of layers placed.

/// Chooses one of `ways(l, chosen)` for every layer `l < n`, where `chosen` holds the ways of
/// the layers before it, best first. At most `budget` calls of `ways`. On failure: the
/// deepest layer that found no way.
pub(crate) fn depth_first<P: Copy>(
    n: usize,
    budget: usize,
    mut ways: impl FnMut(usize, &[P]) -> Vec<P>,
) -> Result<Vec<P>, usize> {
    let mut chosen: Vec<P> = Vec::with_capacity(n);
    // Per chosen layer: its ways, and the one taken.
    let mut stack: Vec<(Vec<P>, usize)> = Vec::with_capacity(n);
    let mut calls = 0;
    let mut deepest = 0;
    while chosen.len() < n {
        let l = chosen.len();
        let options = ways(l, &chosen);
        calls += 1;
        if let Some(&first) = options.first() {
            chosen.push(first);
            stack.push((options, 0));
            continue;
        }
        deepest = deepest.max(l);
        // Move the latest layer that has another way.
        loop {
            let Some((options, taken)) = stack.last_mut() else {
                return Err(deepest);
            };
            chosen.pop();
            if calls < budget && *taken + 1 < options.len() {
                *taken += 1;
                chosen.push(options[*taken]);
                break;
            }
            stack.pop();
        }
    }
    Ok(chosen)
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
        assert_eq!(depth_first(4, 100, ways), Ok(vec![0, 2, 1, 0]));
    }

    #[test]
    fn the_budget_ends_the_search_at_the_deepest_failure() {
        // Calls: layers 0, 1, 2, 3 (none), 3 again after moving layer 2 (none): five.
        assert_eq!(depth_first(4, 5, ways), Err(3));
        assert_eq!(depth_first(1, 10, |_, _: &[u32]| Vec::new()), Err(0));
    }
}
