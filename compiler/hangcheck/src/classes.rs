//! PE classes: the PEs of a region grouped so that every PE of a group can run exactly the
//! same statements, and its four neighbours can too. The checks then look at each group once,
//! so their cost depends on the number of groups (a handful: corners, edges, interior), not
//! on the number of PEs, even on a 750 × 994 fabric.
//!
//! How: the conditions of `if`, `while` and `for` (whether the range is empty) are the only
//! places where coordinates decide what runs, and only through their decisive atoms
//! ([`decisive_atoms`]). An atom reading only `pe.row` is evaluated on every row, one reading
//! only `pe.col` on every column: rows with the same atom values form a **row group**, and
//! likewise columns; a **base class** is a row group × a column group, and every PE of it
//! evaluates every condition alike (any coordinate outside an atom is combined with data into
//! an unknown). A **group** refines a base class by the base classes of the four neighbours
//! (or the region's edge), still as a product of rows × columns. Only an atom reading both
//! coordinates (`pe.row == pe.col`) makes the grouping per PE; no kernel of the standard
//! library or the examples has one.

use std::collections::HashMap;

use wsel_ir::kernel::{BinaryOp, Const, Expr, KernelIr, Stmt};

use crate::eval::{CoordEnv, decisive_atoms, eval, reads};
use crate::facts::{Facts, Scalars};

/// Logical sides, as indices into [`Group::neighbours`].
pub(crate) const NORTH: usize = 0;
pub(crate) const SOUTH: usize = 1;
pub(crate) const EAST: usize = 2;
pub(crate) const WEST: usize = 3;

/// A set of PEs of one region, by logical `(row, column)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PeSet {
    /// Every PE of the listed rows in the listed columns (both sorted).
    Grid { rows: Vec<u32>, cols: Vec<u32> },
    /// The listed PEs, in row-major order.
    List(Vec<(u32, u32)>),
}

impl PeSet {
    pub(crate) fn len(&self) -> u64 {
        match self {
            PeSet::Grid { rows, cols } => rows.len() as u64 * cols.len() as u64,
            PeSet::List(pes) => pes.len() as u64,
        }
    }

    /// The first `n` PEs in row-major order.
    pub(crate) fn first(&self, n: usize) -> Vec<(u32, u32)> {
        match self {
            PeSet::Grid { rows, cols } => rows
                .iter()
                .flat_map(|&r| cols.iter().map(move |&c| (r, c)))
                .take(n)
                .collect(),
            PeSet::List(pes) => pes.iter().copied().take(n).collect(),
        }
    }

    /// A short description: `row 0, columns 1–3`, or `5 PEs` for a list.
    pub(crate) fn describe(&self) -> String {
        match self {
            PeSet::Grid { rows, cols } => {
                format!(
                    "{}, {}",
                    ranges("row", "rows", rows),
                    ranges("column", "columns", cols)
                )
            }
            PeSet::List(pes) => {
                let shown: Vec<String> = pes
                    .iter()
                    .take(4)
                    .map(|(r, c)| format!("({r}, {c})"))
                    .collect();
                let more = if pes.len() > 4 { ", …" } else { "" };
                format!("PEs {}{more}", shown.join(", "))
            }
        }
    }
}

/// Merges grid sets that share their rows (or their columns) into one, so that the columns
/// 1, 2 and 3 of a row are described as `columns 1–3`.
pub(crate) fn merge(sets: Vec<PeSet>) -> Vec<PeSet> {
    let mut out: Vec<PeSet> = Vec::new();
    for set in sets {
        out.push(set);
        // Merging two sets may make the result mergeable with another: repeat until stable.
        'again: loop {
            for i in 0..out.len() {
                for j in i + 1..out.len() {
                    if let Some(m) = merge_two(&out[i], &out[j]) {
                        out[i] = m;
                        out.remove(j);
                        continue 'again;
                    }
                }
            }
            break;
        }
    }
    out
}

fn merge_two(a: &PeSet, b: &PeSet) -> Option<PeSet> {
    let union = |x: &[u32], y: &[u32]| {
        let mut v: Vec<u32> = x.iter().chain(y).copied().collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    match (a, b) {
        (PeSet::Grid { rows: ra, cols: ca }, PeSet::Grid { rows: rb, cols: cb }) => {
            if ra == rb {
                Some(PeSet::Grid {
                    rows: ra.clone(),
                    cols: union(ca, cb),
                })
            } else if ca == cb {
                Some(PeSet::Grid {
                    rows: union(ra, rb),
                    cols: ca.clone(),
                })
            } else {
                None
            }
        }
        (PeSet::List(x), PeSet::List(y)) => {
            let mut v: Vec<(u32, u32)> = x.iter().chain(y).copied().collect();
            v.sort_unstable();
            v.dedup();
            Some(PeSet::List(v))
        }
        _ => None,
    }
}

/// `row 0`, `rows 1–3`, `rows 0, 2–5`.
fn ranges(one: &str, many: &str, values: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            values[i].to_string()
        } else {
            format!("{}–{}", values[i], values[j])
        });
        i = j + 1;
    }
    let word = if values.len() == 1 { one } else { many };
    format!("{word} {}", parts.join(", "))
}

/// A group of PEs that run alike and whose neighbours run alike.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    /// The base class of these PEs.
    pub base: usize,
    /// The base class of the neighbour on each logical side (`NORTH`..`WEST`); `None` where
    /// the PEs are on that edge of the region.
    pub neighbours: [Option<usize>; 4],
    pub pes: PeSet,
}

/// The base classes (one representative PE each) and the groups of one region.
#[derive(Debug, Clone)]
pub(crate) struct Classes {
    pub bases: Vec<CoordEnv>,
    pub groups: Vec<Group>,
    /// The base class of any PE (for the ports that link PEs further apart than neighbours).
    pub base_of: BaseOf,
}

/// The base class of every PE of a region: by its row's and column's groups, or PE by PE.
#[derive(Debug, Clone)]
pub(crate) enum BaseOf {
    Grid {
        row_group: Vec<usize>,
        col_group: Vec<usize>,
        col_groups: usize,
    },
    PerPe {
        base: Vec<usize>,
        cols: u32,
    },
}

impl BaseOf {
    /// The base class of the PE at logical `(row, col)` (inside the region).
    pub(crate) fn at(&self, row: u32, col: u32) -> usize {
        match self {
            BaseOf::Grid {
                row_group,
                col_group,
                col_groups,
            } => row_group[row as usize] * col_groups + col_group[col as usize],
            BaseOf::PerPe { base, cols } => base[(row * cols + col) as usize],
        }
    }
}

/// A decisive atom and the task it is written in (whose locals it may read).
struct Atom {
    task: usize,
    expr: Expr,
}

/// The classes of a `rows × cols` region running `ir`, whose `facts` are known.
pub(crate) fn classes(ir: &KernelIr, facts: &Facts, rows: u32, cols: u32) -> Classes {
    let mut atoms = Vec::new();
    for (t, task) in ir.tasks.iter().enumerate() {
        let mut exprs = Vec::new();
        collect_atoms(&task.body, task, &facts.scalars, &mut exprs);
        atoms.extend(exprs.into_iter().map(|expr| Atom { task: t, expr }));
    }
    let (mut row_atoms, mut col_atoms, mut mixed) = (Vec::new(), Vec::new(), Vec::new());
    for atom in atoms {
        let r = reads(&atom.expr, &facts.scalars);
        match (r.row, r.col) {
            (true, false) => row_atoms.push(atom),
            (false, true) => col_atoms.push(atom),
            _ => mixed.push(atom),
        }
    }
    let env = |row: u32, col: u32| CoordEnv {
        row,
        col,
        rows,
        cols,
    };
    let sig = |atoms: &[Atom], env: CoordEnv| signature(ir, facts, atoms, &env);
    let row_group = group_by(rows, |r| sig(&row_atoms, env(r, 0)));
    let col_group = group_by(cols, |c| sig(&col_atoms, env(0, c)));
    if mixed.is_empty() {
        grid_classes(&row_group, &col_group, rows, cols)
    } else {
        let mixed_sig = |r: u32, c: u32| sig(&mixed, env(r, c));
        per_pe_classes(&row_group, &col_group, &mixed_sig, rows, cols)
    }
}

fn signature(ir: &KernelIr, facts: &Facts, atoms: &[Atom], env: &CoordEnv) -> Vec<Option<Const>> {
    atoms
        .iter()
        .map(|a| eval(&a.expr, &facts.ctx(ir, a.task, Some(env))))
        .collect()
}

/// Groups `0..n` by `key`: the group of every index, and how many groups.
fn group_by<K: Eq + std::hash::Hash>(n: u32, key: impl Fn(u32) -> K) -> (Vec<usize>, usize) {
    let mut ids: HashMap<K, usize> = HashMap::new();
    let groups = (0..n)
        .map(|i| {
            let next = ids.len();
            *ids.entry(key(i)).or_insert(next)
        })
        .collect();
    (groups, ids.len())
}

/// A line's group with the groups of the lines before and after it (none on the edge).
type LineKey = (usize, Option<usize>, Option<usize>);

fn grid_classes(
    (row_group, row_groups): &(Vec<usize>, usize),
    (col_group, col_groups): &(Vec<usize>, usize),
    rows: u32,
    cols: u32,
) -> Classes {
    let base = |rg: usize, cg: usize| rg * col_groups + cg;
    let first_of = |groups: &[usize], g: usize| groups.iter().position(|&x| x == g).unwrap_or(0);
    let mut bases = Vec::new();
    for rg in 0..*row_groups {
        for cg in 0..*col_groups {
            bases.push(CoordEnv {
                row: first_of(row_group, rg) as u32,
                col: first_of(col_group, cg) as u32,
                rows,
                cols,
            });
        }
    }
    // Refined lines: a line's group with its two neighbours' groups.
    let refine = |groups: &[usize]| -> Vec<(LineKey, Vec<u32>)> {
        let mut out: Vec<(LineKey, Vec<u32>)> = Vec::new();
        let n = groups.len();
        for i in 0..n {
            let key = (
                groups[i],
                i.checked_sub(1).map(|j| groups[j]),
                (i + 1 < n).then(|| groups[i + 1]),
            );
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, lines)) => lines.push(i as u32),
                None => out.push((key, vec![i as u32])),
            }
        }
        out
    };
    let mut groups = Vec::new();
    for ((rg, north, south), rows_of) in refine(row_group) {
        for ((cg, west, east), cols_of) in refine(col_group) {
            let mut neighbours = [None; 4];
            neighbours[NORTH] = north.map(|n| base(n, cg));
            neighbours[SOUTH] = south.map(|s| base(s, cg));
            neighbours[EAST] = east.map(|e| base(rg, e));
            neighbours[WEST] = west.map(|w| base(rg, w));
            groups.push(Group {
                base: base(rg, cg),
                neighbours,
                pes: PeSet::Grid {
                    rows: rows_of.clone(),
                    cols: cols_of,
                },
            });
        }
    }
    let base_of = BaseOf::Grid {
        row_group: row_group.clone(),
        col_group: col_group.clone(),
        col_groups: *col_groups,
    };
    Classes {
        bases,
        groups,
        base_of,
    }
}

fn per_pe_classes(
    (row_group, _): &(Vec<usize>, usize),
    (col_group, _): &(Vec<usize>, usize),
    mixed_signature: &dyn Fn(u32, u32) -> Vec<Option<Const>>,
    rows: u32,
    cols: u32,
) -> Classes {
    let env = |row: u32, col: u32| CoordEnv {
        row,
        col,
        rows,
        cols,
    };
    let mut ids: HashMap<(usize, usize, Vec<Option<Const>>), usize> = HashMap::new();
    let mut bases = Vec::new();
    let mut base_of = vec![0usize; rows as usize * cols as usize];
    for r in 0..rows {
        for c in 0..cols {
            let key = (
                row_group[r as usize],
                col_group[c as usize],
                mixed_signature(r, c),
            );
            let next = ids.len();
            let id = *ids.entry(key).or_insert(next);
            if id == bases.len() {
                bases.push(env(r, c));
            }
            base_of[(r * cols + c) as usize] = id;
        }
    }
    let at = |r: u32, c: u32| base_of[(r * cols + c) as usize];
    let mut index: HashMap<(usize, [Option<usize>; 4]), usize> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let mut neighbours = [None; 4];
            neighbours[NORTH] = r.checked_sub(1).map(|n| at(n, c));
            neighbours[SOUTH] = (r + 1 < rows).then(|| at(r + 1, c));
            neighbours[EAST] = (c + 1 < cols).then(|| at(r, c + 1));
            neighbours[WEST] = c.checked_sub(1).map(|w| at(r, w));
            let key = (at(r, c), neighbours);
            let next = groups.len();
            let g = *index.entry(key).or_insert(next);
            if g == groups.len() {
                groups.push(Group {
                    base: at(r, c),
                    neighbours,
                    pes: PeSet::List(Vec::new()),
                });
            }
            if let PeSet::List(pes) = &mut groups[g].pes {
                pes.push((r, c));
            }
        }
    }
    let base_of = BaseOf::PerPe {
        base: base_of,
        cols,
    };
    Classes {
        bases,
        groups,
        base_of,
    }
}

/// The decisive atoms of every condition in `body`.
fn collect_atoms(
    body: &[Stmt],
    task: &wsel_ir::kernel::Task,
    scalars: &Scalars,
    out: &mut Vec<Expr>,
) {
    for stmt in body {
        match stmt {
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                decisive_atoms(cond, scalars, out);
                collect_atoms(then_body, task, scalars, out);
                collect_atoms(else_body, task, scalars, out);
            }
            Stmt::While { cond, body } => {
                decisive_atoms(cond, scalars, out);
                collect_atoms(body, task, scalars, out);
            }
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => {
                decisive_atoms(&loop_runs(task, *local, lo, hi), scalars, out);
                collect_atoms(body, task, scalars, out);
            }
            _ => {}
        }
    }
}

/// `lo < hi`: whether a `for` loop's body runs at least once.
pub(crate) fn loop_runs(
    task: &wsel_ir::kernel::Task,
    local: wsel_ir::kernel::LocalId,
    lo: &Expr,
    hi: &Expr,
) -> Expr {
    let ty = task
        .locals
        .get(local.0 as usize)
        .map_or(wsel_ir::kernel::ScalarTy::I32, |l| l.ty);
    Expr::Binary {
        op: BinaryOp::Lt,
        ty,
        lhs: Box::new(lo.clone()),
        rhs: Box::new(hi.clone()),
    }
}
