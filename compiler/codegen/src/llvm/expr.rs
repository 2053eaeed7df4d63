//! Expression translation to LLVM IR: scalar expressions, reductions, and the element-wise
//! expressions of vector statements (their scalar parts evaluated once, before the loop).

use inkwell::IntPredicate;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use wsel_abi as abi;
use wsel_ir::kernel::{ArrayId, Coord, Expr, ReduceOp, ScalarTy, Slice, VExpr};

use super::function::{Gen, Tr};
use crate::CodegenError;
use crate::prepared::PrepareLeaves;
use crate::semantics;

type V<'ctx> = BasicValueEnum<'ctx>;

/// A vector statement's value with its scalar parts computed: values, slice starts (i64)
/// and slice base addresses.
pub(super) type Prepared<'ctx> =
    crate::prepared::Prepared<V<'ctx>, IntValue<'ctx>, PointerValue<'ctx>>;

impl<'ctx> Gen<'_, 'ctx> {
    pub(super) fn expr(&mut self, expr: &Expr) -> Tr<V<'ctx>> {
        match expr {
            Expr::Const(c) => self.constant(c.ty, c.bits),
            Expr::Local(local) => {
                let (slot, ty) = self.locals[local.0 as usize];
                Ok(self.b.build_load(ty, slot, "")?)
            }
            Expr::Coord(coord) => self.coord(*coord),
            Expr::Load { array, index } => {
                let index = self.index(index)?;
                let address = self.element_address(*array, index)?;
                self.load(self.kernel.array(*array).elem, address)
            }
            Expr::Unary { op, ty, operand } => {
                let a = self.expr(operand)?;
                self.unary(*op, *ty, a)
            }
            Expr::Binary { op, ty, lhs, rhs } => {
                let a = self.expr(lhs)?;
                self.binary_lazy(*op, *ty, a, |g| g.expr(rhs))
            }
            Expr::Cast { from, to, value } => {
                let a = self.expr(value)?;
                self.cast(*from, *to, a)
            }
            Expr::Math { func, ty, arg } => {
                let a = self.expr(arg)?;
                self.math(*func, *ty, a)
            }
            Expr::Reduce { op, ty, src } => self.reduce(*op, *ty, src),
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
        }
    }

    /// `select(c, a, b)` on evaluated operands (`c` a `bool`, 0 or 1).
    fn select(&mut self, c: V<'ctx>, a: V<'ctx>, b: V<'ctx>) -> Tr<V<'ctx>> {
        let zero = self.i32(0);
        let chosen = self
            .b
            .build_int_compare(IntPredicate::NE, c.into_int_value(), zero, "")?;
        Ok(self.b.build_select(chosen, a, b, "")?)
    }

    pub(super) fn load(&mut self, ty: ScalarTy, address: PointerValue<'ctx>) -> Tr<V<'ctx>> {
        let ty = self.llvm_ty(ty);
        Ok(self.b.build_load(ty, address, "")?)
    }

    fn coord(&mut self, coord: Coord) -> Tr<V<'ctx>> {
        let offset = match coord {
            Coord::PeRow => abi::CTX_Y,
            Coord::PeCol => abi::CTX_X,
            Coord::RegionRows => abi::CTX_HEIGHT,
            Coord::RegionCols => abi::CTX_WIDTH,
            Coord::Cycle => return self.clock(),
        };
        self.ctx_field(offset, self.t.i32.into())
    }

    /// Folds `src` left to right from its first element.
    fn reduce(&mut self, op: ReduceOp, ty: ScalarTy, src: &Slice) -> Tr<V<'ctx>> {
        let start = self.index(&src.start)?;
        let len = self.index(&src.len)?;
        self.check_slice(src.array, start, len)?;
        let plan = wsel_ir::cost::reduce_length_cost(ty, self.cost);
        self.charge_len(&plan, len)?;
        let base = self.slice_base(src.array, start)?;
        let fold = semantics::reduce_op(op);
        let value_ty = self.llvm_ty(ty);

        let empty = self.constant(ty, semantics::reduce_empty(op, ty))?;
        let first = self.block("reduce_first");
        let header = self.block("reduce_header");
        let body = self.block("reduce_body");
        let done = self.block("reduce_done");
        let is_empty = self
            .b
            .build_int_compare(IntPredicate::EQ, len, self.i64(0), "")?;
        let before = self.current_block()?;
        self.b.build_conditional_branch(is_empty, done, first)?;

        self.b.position_at_end(first);
        let x0 = self.load(ty, base)?;
        self.b.build_unconditional_branch(header)?;

        self.b.position_at_end(header);
        let acc = self.b.build_phi(value_ty, "acc")?;
        let i = self.b.build_phi(self.t.i64, "i")?;
        let i_value = i.as_basic_value().into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i_value, len, "")?;
        self.b.build_conditional_branch(more, body, done)?;

        self.b.position_at_end(body);
        let address = self.element_at(base, i_value)?;
        let x = self.load(ty, address)?;
        let next = self.binary(fold, ty, acc.as_basic_value(), x)?;
        let i_next = self.b.build_int_add(i_value, self.i64(1), "")?;
        let body_end = self.current_block()?;
        self.b.build_unconditional_branch(header)?;
        acc.add_incoming(&[(&x0, first), (&next, body_end)]);
        i.add_incoming(&[(&self.i64(1), first), (&i_next, body_end)]);

        self.b.position_at_end(done);
        let result = self.b.build_phi(value_ty, "reduced")?;
        result.add_incoming(&[(&empty, before), (&acc.as_basic_value(), header)]);
        Ok(result.as_basic_value())
    }
    pub(super) fn prepare(&mut self, value: &VExpr) -> Tr<Prepared<'ctx>> {
        crate::prepared::prepare(self, value)
    }

    /// Checks every source slice of `prepared` (in order) for `len` elements.
    pub(super) fn check_sources(&mut self, prepared: &Prepared<'ctx>, len: IntValue<'ctx>) -> Tr {
        prepared.try_for_each_source(&mut |array, start| self.check_slice(array, start, len))
    }

    /// The value of element `i` (an i64) of `prepared`.
    pub(super) fn element(&mut self, prepared: &Prepared<'ctx>, i: IntValue<'ctx>) -> Tr<V<'ctx>> {
        match prepared {
            Prepared::Value(value) => Ok(*value),
            Prepared::Elem { array, base, .. } => {
                let address = self.element_at(*base, i)?;
                self.load(self.kernel.array(*array).elem, address)
            }
            Prepared::Unary { op, ty, operand } => {
                let a = self.element(operand, i)?;
                self.unary(*op, *ty, a)
            }
            Prepared::Binary { op, ty, lhs, rhs } => {
                let a = self.element(lhs, i)?;
                self.binary_lazy(*op, *ty, a, |g| g.element(rhs, i))
            }
            Prepared::Cast { from, to, value } => {
                let a = self.element(value, i)?;
                self.cast(*from, *to, a)
            }
            Prepared::Math { func, ty, arg } => {
                let a = self.element(arg, i)?;
                self.math(*func, *ty, a)
            }
            Prepared::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                let c = self.element(cond, i)?;
                let a = self.element(on_true, i)?;
                let b = self.element(on_false, i)?;
                self.select(c, a, b)
            }
        }
    }
}

impl<'ctx> PrepareLeaves for Gen<'_, 'ctx> {
    type Value = V<'ctx>;
    type Start = IntValue<'ctx>;
    type Base = PointerValue<'ctx>;
    type Error = CodegenError;

    fn scalar(&mut self, expr: &Expr) -> Tr<V<'ctx>> {
        self.expr(expr)
    }

    fn elem(&mut self, array: ArrayId, start: &Expr) -> Tr<(IntValue<'ctx>, PointerValue<'ctx>)> {
        let start = self.index(start)?;
        Ok((start, self.slice_base(array, start)?))
    }
}
