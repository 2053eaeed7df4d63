//! Why a layer that fits no region on the least sizes does not run on a wider one
//! (`docs/mapping.md` §4, "Training's forks"): pipelined training's backward layer may need
//! more SRAM per PE than one PE has at the batch (E0601) while a wider region its `where`
//! allows fits; when the search then finds no placement of those wider sizes whose routes
//! exist, the reported E0601 says so in a note, `` `L` on R × C does not route (…) ``, so
//! that a run falling back to micro-batches gives the reason that holds.

use wsel_diagnostic::Diagnostic;

use super::{Failure, Incomplete, Problem};
use crate::diagnostics::E0601;

/// The least sizes' layers that fit no region on them, and the first wider sizes of those
/// layers that fit but do not route.
#[derive(Default)]
pub(super) struct Wider {
    least: Option<Least>,
    /// `` `L` on R × C does not route (…) ``.
    note: Option<String>,
}

/// Sizes on which a companion's layer fits no region, and the layers blamed.
struct Least {
    sizes: Vec<(u32, u32)>,
    layers: Vec<usize>,
}

impl Wider {
    /// Notes the failure `inc` of a placement of `sizes`.
    pub(super) fn saw(&mut self, problem: &Problem<'_>, sizes: &[(u32, u32)], inc: &Incomplete) {
        let Some(least) = &self.least else {
            if inc.sized {
                self.least = Some(Least {
                    sizes: sizes.to_vec(),
                    layers: inc.layers.clone(),
                });
            }
            return;
        };
        if inc.sized || self.note.is_some() {
            return;
        }
        let why = inc.diagnostics.first().map_or("", |d| d.message.as_str());
        self.note = least
            .layers
            .iter()
            .find(|&&l| sizes.get(l) != least.sizes.get(l))
            .and_then(|&l| {
                let (r, c) = sizes.get(l)?;
                let name = &problem.graph.layers.get(l)?.name;
                Some(format!("`{name}` on {r} × {c} does not route ({why})"))
            });
    }

    /// `failure` with the note on its E0601s, when there is one.
    pub(super) fn noted(self, failure: Failure) -> Failure {
        match (failure, self.note) {
            (Failure::Later(found), Some(note)) => Failure::Later(with_note(found, &note)),
            (failure, _) => failure,
        }
    }
}

/// `found` with `note` on every E0601.
fn with_note(found: Vec<Diagnostic>, note: &str) -> Vec<Diagnostic> {
    found
        .into_iter()
        .map(|d| {
            if d.code == E0601 {
                d.with_note(note)
            } else {
                d
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_diagnostic::Location;

    fn error(code: &'static str) -> Diagnostic {
        let at = Location {
            file: "m.wse".into(),
            span: 0..1,
        };
        Diagnostic::error(code, "a message", at, "here")
    }

    /// The note goes on the E0601s of a routes-or-colors failure, nothing else.
    #[test]
    fn the_note_goes_on_the_e0601s() {
        let wider = || Wider {
            least: None,
            note: Some("`a#1` on 1 × 2 does not route (no way)".into()),
        };
        let found = vec![error(E0601), error("E0603")];
        let Failure::Later(noted) = wider().noted(Failure::Later(found)) else {
            panic!("a failure of routes or colors stays one");
        };
        assert_eq!(noted[0].notes, ["`a#1` on 1 × 2 does not route (no way)"]);
        assert!(noted[1].notes.is_empty());
        assert!(matches!(
            wider().noted(Failure::Parts(3)),
            Failure::Parts(3)
        ));
    }
}
