//! Expression translation: scalar expressions, reductions, and the element-wise expressions of
//! vector statements (their scalar parts evaluated once, before the element loop).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Value, types};
use wsel_abi as abi;
use wsel_ir::kernel::{ArrayId, BinaryOp, Coord, Expr, MathFn, ReduceOp, ScalarTy, Slice, VExpr};

use super::function::{Tr, Translator, clif_ty};
use crate::CodegenError;
use crate::prepared::PrepareLeaves;
use crate::semantics;

/// A vector statement's value with its scalar parts computed: values, slice starts (i64)
/// and slice base addresses.
pub(super) type Prepared = crate::prepared::Prepared<Value, Value, Value>;

impl Translator<'_, '_> {
    pub(super) fn expr(&mut self, expr: &Expr) -> Tr<Value> {
        Ok(match expr {
            Expr::Const(c) => self.constant(c.ty, c.bits),
            Expr::Local(local) => self.b.use_var(self.locals[local.0 as usize]),
            Expr::Coord(coord) => self.coord(*coord),
            Expr::Load { array, index } => {
                let index = self.index(index)?;
                let address = self.element_address(*array, index);
                self.load(self.kernel.array(*array).elem, address)
            }
            Expr::Unary { op, ty, operand } => {
                let a = self.expr(operand)?;
                self.unary(*op, *ty, a)
            }
            Expr::Binary { op, ty, lhs, rhs } => {
                let a = self.expr(lhs)?;
                self.binary_lazy(*op, *ty, a, |t| t.expr(rhs))?
            }
            Expr::Cast { from, to, value } => {
                let a = self.expr(value)?;
                self.cast(*from, *to, a)
            }
            Expr::Math { func, ty, arg } => {
                let a = self.expr(arg)?;
                self.math(*func, *ty, a)
            }
            Expr::Reduce { op, ty, src } => self.reduce(*op, *ty, src)?,
            Expr::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                let c = self.expr(cond)?;
                let a = self.expr(on_true)?;
                let b = self.expr(on_false)?;
                self.select(c, a, b)
            }
        })
    }

    /// `select(c, a, b)` on evaluated operands (`c` a `bool`, 0 or 1).
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.b.ins().select(c, a, b)
    }

    pub(super) fn load(&mut self, ty: ScalarTy, address: Value) -> Value {
        self.b
            .ins()
            .load(clif_ty(ty), MemFlagsData::trusted(), address, 0)
    }

    fn coord(&mut self, coord: Coord) -> Value {
        let offset = match coord {
            Coord::PeRow => abi::CTX_Y,
            Coord::PeCol => abi::CTX_X,
            Coord::RegionRows => abi::CTX_HEIGHT,
            Coord::RegionCols => abi::CTX_WIDTH,
            Coord::Cycle => return self.clock(),
        };
        self.b
            .ins()
            .load(types::I32, MemFlagsData::trusted(), self.ctx, offset as i32)
    }

    /// Folds `src` left to right from its first element.
    fn reduce(&mut self, op: ReduceOp, ty: ScalarTy, src: &Slice) -> Tr<Value> {
        let start = self.index(&src.start)?;
        let len = self.index(&src.len)?;
        self.check_slice(src.array, start, len);
        let plan = wsel_ir::cost::reduce_length_cost(ty, self.cost);
        self.charge_len(&plan, len);
        let base = self.slice_base(src.array, start);
        let fold = semantics::reduce_op(op);

        let first = self.b.create_block();
        let header = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        let acc = self.b.append_block_param(header, clif_ty(ty));
        let i = self.b.append_block_param(header, types::I64);
        let result = self.b.append_block_param(done, clif_ty(ty));

        let empty = self.constant(ty, semantics::reduce_empty(op, ty));
        let is_empty = self.b.ins().icmp_imm_s(IntCC::Equal, len, 0);
        self.b
            .ins()
            .brif(is_empty, done, &[BlockArg::Value(empty)], first, &[]);

        self.b.switch_to_block(first);
        let x0 = self.load(ty, base);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b
            .ins()
            .jump(header, &[BlockArg::Value(x0), BlockArg::Value(one)]);

        self.b.switch_to_block(header);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, len);
        self.b
            .ins()
            .brif(more, body, &[], done, &[BlockArg::Value(acc)]);

        self.b.switch_to_block(body);
        let address = self.element_at(base, i);
        let x = self.load(ty, address);
        let next = self.binary(fold, ty, acc, x);
        let i_next = self.b.ins().iadd_imm_s(i, 1);
        self.b
            .ins()
            .jump(header, &[BlockArg::Value(next), BlockArg::Value(i_next)]);

        self.b.switch_to_block(done);
        Ok(result)
    }
    pub(super) fn prepare(&mut self, value: &VExpr) -> Tr<Prepared> {
        crate::prepared::prepare(self, value)
    }

    /// Checks every source slice of `prepared` (in order) for `len` elements.
    pub(super) fn check_sources(&mut self, prepared: &Prepared, len: Value) {
        let checked: Result<(), std::convert::Infallible> =
            prepared.try_for_each_source(&mut |array, start| {
                self.check_slice(array, start, len);
                Ok(())
            });
        let Ok(()) = checked;
    }

    /// The value of element `i` (an i64) of `prepared`. With `raw`, an `f32` result may be
    /// left a non-canonical NaN: the caller promises to consume it only in a way whose result
    /// does not depend on a NaN's bits (see [`operands_may_be_raw`]).
    pub(super) fn element(&mut self, prepared: &Prepared, i: Value, raw: bool) -> Tr<Value> {
        Ok(match prepared {
            Prepared::Value(value) => *value,
            Prepared::Elem { array, base, .. } => {
                let address = self.element_at(*base, i);
                self.load(self.kernel.array(*array).elem, address)
            }
            Prepared::Unary { op, ty, operand } => {
                let a = self.element(operand, i, false)?;
                self.unary(*op, *ty, a)
            }
            Prepared::Binary { op, ty, lhs, rhs }
                if *ty == ScalarTy::Bool && matches!(op, BinaryOp::And | BinaryOp::Or) =>
            {
                let a = self.element(lhs, i, false)?;
                self.binary_lazy(*op, *ty, a, |t| t.element(rhs, i, false))?
            }
            Prepared::Binary { op, ty, lhs, rhs } => {
                let operand_raw = operands_may_be_raw(prepared);
                let a = self.element(lhs, i, operand_raw)?;
                let b = self.element(rhs, i, operand_raw)?;
                self.binary_raw(*op, *ty, a, b, raw)
            }
            Prepared::Cast { from, to, value } => {
                // A same-type cast passes its operand through, raw or not.
                let operand_raw = if from == to {
                    raw
                } else {
                    operands_may_be_raw(prepared)
                };
                let a = self.element(value, i, operand_raw)?;
                self.cast(*from, *to, a)
            }
            Prepared::Math { func, ty, arg } => {
                let a = self.element(arg, i, operands_may_be_raw(prepared))?;
                self.math_raw(*func, *ty, a, raw)
            }
            // The chosen value's bits pass through: raw operands are as good as the caller's
            // promise.
            Prepared::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                let c = self.element(cond, i, false)?;
                let a = self.element(on_true, i, raw)?;
                let b = self.element(on_false, i, raw)?;
                self.select(c, a, b)
            }
        })
    }
}

/// Whether a node's operands may be raw `f32` values (possibly non-canonical NaNs standing
/// for the canonical one): true where the node's result does not depend on a NaN operand's
/// bits. Arithmetic, `min`/`max` and `sqrt` turn any NaN operand into a NaN result (which is
/// canonicalised or itself raw), comparisons treat every NaN alike, and casts from `f32` to
/// another type map every NaN to the same value. Negation, `abs`, host functions and stores
/// observe or pass on the bits, so their operands are canonicalised.
pub(super) fn operands_may_be_raw(node: &Prepared) -> bool {
    match node {
        Prepared::Binary { op, ty, .. } => {
            *ty == ScalarTy::F32 && !matches!(op, BinaryOp::Rem | BinaryOp::And | BinaryOp::Or)
        }
        Prepared::Cast { from, to, .. } => *from == ScalarTy::F32 && from != to,
        Prepared::Math { func, ty, .. } => *ty == ScalarTy::F32 && *func == MathFn::Sqrt,
        _ => false,
    }
}

impl PrepareLeaves for Translator<'_, '_> {
    type Value = Value;
    type Start = Value;
    type Base = Value;
    type Error = CodegenError;

    fn scalar(&mut self, expr: &Expr) -> Tr<Value> {
        self.expr(expr)
    }

    fn elem(&mut self, array: ArrayId, start: &Expr) -> Tr<(Value, Value)> {
        let start = self.index(start)?;
        Ok((start, self.slice_base(array, start)))
    }
}
