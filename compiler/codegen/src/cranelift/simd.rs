//! A four-lane fast path for `f32` vector statements built only from arithmetic, `min`/`max`,
//! negation, `abs` and `sqrt`: the elements are computed with F32X4 instructions, four at a
//! time, and the remaining (fewer than four) elements by the scalar loop.
//!
//! Lane-wise IEEE arithmetic gives the same bits as the scalar loop, NaNs included (every
//! result is canonicalised per lane). What could differ is the order of reads and writes when
//! the destination overlaps a source: element `i` must see the writes of elements before it.
//! Four lanes read before they write, which is the same as in-order execution unless a source
//! starts 1 to 3 words *before* the destination; that case is detected at run time and left
//! entirely to the scalar loop.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::Ieee32;
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Value, types};
use wsel_ir::kernel::{ArrayId, AssignOp, BinaryOp, MathFn, ScalarTy, UnaryOp};

use super::expr::Prepared;
use super::function::Translator;
use crate::semantics::CANONICAL_NAN;

const LANES: i64 = 4;

/// Whether `dst op= value` (any assignment operator) with destination elements of `elem`
/// can use the four-lane path.
pub(super) fn eligible(elem: ScalarTy, value: &Prepared) -> bool {
    elem == ScalarTy::F32 && lanes_ok(value)
}

fn lanes_ok(node: &Prepared) -> bool {
    match node {
        Prepared::Value(_) | Prepared::Elem { .. } => true,
        Prepared::Unary {
            op: UnaryOp::Neg,
            ty: ScalarTy::F32,
            operand,
        } => lanes_ok(operand),
        Prepared::Binary {
            op:
                BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Min
                | BinaryOp::Max,
            ty: ScalarTy::F32,
            lhs,
            rhs,
        } => lanes_ok(lhs) && lanes_ok(rhs),
        Prepared::Math {
            func: MathFn::Sqrt | MathFn::Abs,
            ty: ScalarTy::F32,
            arg,
        } => lanes_ok(arg),
        _ => false,
    }
}

/// A prepared value with its scalars broadcast to four lanes.
enum Lanes {
    Splat(Value),
    Elem(Value),
    Neg(Box<Lanes>),
    Binary(BinaryOp, Box<Lanes>, Box<Lanes>),
    Math(MathFn, Box<Lanes>),
}

impl Translator<'_, '_> {
    /// Emits the four-lane loop over the first `len & !3` elements when no source overlaps
    /// the destination harmfully; gives the index (i64) at which the scalar loop must go on.
    pub(super) fn translate_vector_lanes(
        &mut self,
        dst: ArrayId,
        start: Value,
        len: Value,
        op: AssignOp,
        prepared: &Prepared,
        base: Value,
    ) -> Value {
        let dst_word = self.absolute_word(dst, start);
        let mut safe = self.b.ins().iconst(types::I8, 1);
        self.overlap_checks(prepared, dst_word, &mut safe);
        let whole = self.b.ins().band_imm_s(len, !(LANES - 1));
        let zero = self.b.ins().iconst(types::I64, 0);
        let end = self.b.ins().select(safe, whole, zero);
        let lanes = self.broadcast(prepared);

        let body = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(body, types::I64);
        let any = self.b.ins().icmp(IntCC::SignedLessThan, zero, end);
        self.b
            .ins()
            .brif(any, body, &[BlockArg::Value(zero)], exit, &[]);

        self.b.switch_to_block(body);
        let value = self.lanes(&lanes, i);
        let address = self.element_at(base, i);
        let stored = match op {
            AssignOp::Set => value,
            _ => {
                let old = self.b.ins().load(types::F32X4, lane_flags(), address, 0);
                let combined = match op {
                    AssignOp::Add => self.b.ins().fadd(old, value),
                    AssignOp::Sub => self.b.ins().fsub(old, value),
                    AssignOp::Mul => self.b.ins().fmul(old, value),
                    _ => self.b.ins().fdiv(old, value),
                };
                self.canonicalize_lanes(combined)
            }
        };
        self.b.ins().store(lane_flags(), stored, address, 0);
        let next = self.b.ins().iadd_imm_s(i, LANES);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, next, end);
        self.b
            .ins()
            .brif(more, body, &[BlockArg::Value(next)], exit, &[]);
        self.b.switch_to_block(exit);
        end
    }

    /// The SRAM word (i64) of element `start` of `array`.
    fn absolute_word(&mut self, array: ArrayId, start: Value) -> Value {
        let offset = i64::from(self.kernel.array(array).offset_words);
        self.b.ins().iadd_imm_s(start, offset)
    }

    /// `safe &= (dst - src <= 0 || dst - src >= 4)` for every source slice.
    fn overlap_checks(&mut self, node: &Prepared, dst_word: Value, safe: &mut Value) {
        let checked: Result<(), std::convert::Infallible> =
            node.try_for_each_source(&mut |array, start| {
                let src_word = self.absolute_word(array, start);
                let delta = self.b.ins().isub(dst_word, src_word);
                let behind = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedLessThanOrEqual, delta, 0);
                let far = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, delta, LANES);
                let ok = self.b.ins().bor(behind, far);
                *safe = self.b.ins().band(*safe, ok);
                Ok(())
            });
        let Ok(()) = checked;
    }

    fn broadcast(&mut self, node: &Prepared) -> Lanes {
        match node {
            Prepared::Value(value) => Lanes::Splat(self.b.ins().splat(types::F32X4, *value)),
            Prepared::Elem { base, .. } => Lanes::Elem(*base),
            Prepared::Unary { operand, .. } => Lanes::Neg(Box::new(self.broadcast(operand))),
            Prepared::Binary { op, lhs, rhs, .. } => Lanes::Binary(
                *op,
                Box::new(self.broadcast(lhs)),
                Box::new(self.broadcast(rhs)),
            ),
            Prepared::Math { func, arg, .. } => Lanes::Math(*func, Box::new(self.broadcast(arg))),
            // Not eligible; `eligible` keeps casts and selects out.
            Prepared::Cast { value, .. } | Prepared::Select { on_true: value, .. } => {
                self.broadcast(value)
            }
        }
    }

    /// Elements `i .. i + 4` of `node`, canonical.
    fn lanes(&mut self, node: &Lanes, i: Value) -> Value {
        match node {
            Lanes::Splat(value) => *value,
            Lanes::Elem(base) => {
                let address = self.element_at(*base, i);
                self.b.ins().load(types::F32X4, lane_flags(), address, 0)
            }
            Lanes::Neg(operand) => {
                let a = self.lanes(operand, i);
                self.b.ins().fneg(a)
            }
            Lanes::Binary(op, lhs, rhs) => {
                let a = self.lanes(lhs, i);
                let b = self.lanes(rhs, i);
                let ins = self.b.ins();
                let result = match op {
                    BinaryOp::Add => ins.fadd(a, b),
                    BinaryOp::Sub => ins.fsub(a, b),
                    BinaryOp::Mul => ins.fmul(a, b),
                    BinaryOp::Div => ins.fdiv(a, b),
                    BinaryOp::Min => ins.fmin(a, b),
                    _ => ins.fmax(a, b),
                };
                self.canonicalize_lanes(result)
            }
            Lanes::Math(MathFn::Abs, arg) => {
                let a = self.lanes(arg, i);
                self.b.ins().fabs(a)
            }
            Lanes::Math(_, arg) => {
                let a = self.lanes(arg, i);
                let root = self.b.ins().sqrt(a);
                self.canonicalize_lanes(root)
            }
        }
    }

    fn canonicalize_lanes(&mut self, x: Value) -> Value {
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let mask = self.b.ins().bitcast(types::F32X4, MemFlagsData::new(), nan);
        let canonical = self.b.ins().f32const(Ieee32::with_bits(CANONICAL_NAN));
        let canonical = self.b.ins().splat(types::F32X4, canonical);
        self.b.ins().bitselect(mask, canonical, x)
    }
}

/// SRAM is only 4-byte aligned: four-lane accesses are unaligned.
fn lane_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
