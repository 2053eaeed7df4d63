//! Each statement's fixed cycles (`wsel_ir::cost::stmt_fixed_cycles`), computed once when a
//! kernel is prepared instead of at every execution: a tree beside each task's body, one
//! entry per statement, with the blocks nested in it (a loop's body, an `if`'s two arms).

use wsel_ir::cost::{self, CostModel};
use wsel_ir::kernel::Stmt;

/// The fixed cycles of a block's statements, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct BlockCosts(pub(super) Vec<StmtCosts>);

/// One statement's fixed cycles, and its nested blocks'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StmtCosts {
    /// What `stmt_fixed_cycles` charges each time the statement executes.
    pub(super) fixed: u64,
    /// A `while` loop's condition, charged at every test.
    pub(super) cond: u64,
    /// A loop's body, or an `if`'s `then` arm then its `else` arm; empty for the others.
    pub(super) bodies: Vec<BlockCosts>,
}

impl BlockCosts {
    /// The costs of `stmts` under `model`.
    pub(super) fn of(stmts: &[Stmt], model: &CostModel) -> BlockCosts {
        BlockCosts(stmts.iter().map(|s| StmtCosts::of(s, model)).collect())
    }
}

impl StmtCosts {
    fn of(stmt: &Stmt, model: &CostModel) -> StmtCosts {
        let block = |body: &[Stmt]| BlockCosts::of(body, model);
        let (cond, bodies) = match stmt {
            Stmt::For { body, .. } => (0, vec![block(body)]),
            Stmt::While { cond, body } => (cost::expr_cycles(cond, model), vec![block(body)]),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => (0, vec![block(then_body), block(else_body)]),
            _ => (0, Vec::new()),
        };
        StmtCosts {
            fixed: cost::stmt_fixed_cycles(stmt, model),
            cond,
            bodies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::{BinaryOp, Const, Expr, LocalId, ScalarTy};

    fn local(i: u32) -> Expr {
        Expr::Local(LocalId(i))
    }

    fn add(lhs: Expr, rhs: Expr) -> Expr {
        Expr::Binary {
            op: BinaryOp::Add,
            ty: ScalarTy::U32,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        }
    }

    fn set(i: u32, value: Expr) -> Stmt {
        Stmt::SetLocal {
            local: LocalId(i),
            value,
        }
    }

    /// A statement with no nested block, of `fixed` cycles.
    fn plain(fixed: u64) -> StmtCosts {
        StmtCosts {
            fixed,
            cond: 0,
            bodies: Vec::new(),
        }
    }

    /// `for i in 0..n + n { while i + n { if i + i + i { x = i } else { x = i + n + n } }
    /// x = n }`: each block's costs in their own places (an `if`'s arms in order), by hand a
    /// cycle for each `+`, assignment and branch, one for the `for`.
    #[test]
    fn nested_blocks_keep_their_own_costs() {
        let (zero, i, n) = (Expr::Const(Const::u32(0)), 0, 1);
        let if_ = Stmt::If {
            cond: add(add(local(i), local(i)), local(i)),
            then_body: vec![set(2, local(i))],
            else_body: vec![set(2, add(add(local(i), local(n)), local(n)))],
        };
        let while_ = Stmt::While {
            cond: add(local(i), local(n)),
            body: vec![if_],
        };
        let for_ = Stmt::For {
            local: LocalId(i),
            lo: zero,
            hi: add(local(n), local(n)),
            body: vec![while_, set(2, local(n))],
        };
        let costs = BlockCosts::of(&[for_], &CostModel::WSE2_LIKE);
        let expected = BlockCosts(vec![StmtCosts {
            fixed: 2,
            cond: 0,
            bodies: vec![BlockCosts(vec![
                StmtCosts {
                    fixed: 0,
                    cond: 1,
                    bodies: vec![BlockCosts(vec![StmtCosts {
                        fixed: 3,
                        cond: 0,
                        bodies: vec![BlockCosts(vec![plain(1)]), BlockCosts(vec![plain(3)])],
                    }])],
                },
                plain(1),
            ])],
        }]);
        assert_eq!(costs, expected);
    }
}
