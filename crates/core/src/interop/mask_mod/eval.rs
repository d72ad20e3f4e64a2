//! Evaluation of a compiled expression at one cell.

use super::compile::Func;
use super::parse::{BinOp, Expr, Ty};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Val {
    I(i64),
    B(bool),
}

pub(super) const MAX_CALL_DEPTH: usize = 64;

pub(super) fn eval(e: &Expr, funcs: &[Func], q: i64, k: i64, depth: usize) -> Result<Val, String> {
    let int = |v: Val| match v {
        Val::I(x) => x,
        Val::B(b) => i64::from(b),
    };
    let boolean = |v: Val| matches!(v, Val::B(true));
    Ok(match e {
        Expr::Int(v) => Val::I(*v),
        Expr::Bool(b) => Val::B(*b),
        Expr::Q => Val::I(q),
        Expr::K => Val::I(k),
        Expr::Neg(a) => Val::I(int(eval(a, funcs, q, k, depth)?).checked_neg().ok_or("integer overflow")?),
        Expr::Not(a, Ty::Bool) => Val::B(!boolean(eval(a, funcs, q, k, depth)?)),
        Expr::Not(a, Ty::Int) => Val::I(!int(eval(a, funcs, q, k, depth)?)),
        Expr::Bin(op, ty, a, b) => {
            let x = eval(a, funcs, q, k, depth)?;
            let y = eval(b, funcs, q, k, depth)?;
            if *ty == Ty::Bool {
                let (x, y) = (boolean(x), boolean(y));
                return Ok(Val::B(match op {
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Eq => x == y,
                    _ => x != y,
                }));
            }
            let (x, y) = (int(x), int(y));
            let overflow = || "integer overflow".to_string();
            match op {
                BinOp::And => Val::I(x & y),
                BinOp::Or => Val::I(x | y),
                BinOp::Add => Val::I(x.checked_add(y).ok_or_else(overflow)?),
                BinOp::Sub => Val::I(x.checked_sub(y).ok_or_else(overflow)?),
                BinOp::Mul => Val::I(x.checked_mul(y).ok_or_else(overflow)?),
                BinOp::FloorDiv | BinOp::Mod => {
                    if y == 0 {
                        return Err("integer division by zero".into());
                    }
                    let d = x.checked_div(y).ok_or_else(overflow)?;
                    let r = x.checked_rem(y).ok_or_else(overflow)?;
                    let adjust = r != 0 && ((r < 0) != (y < 0));
                    if *op == BinOp::FloorDiv {
                        Val::I(if adjust { d - 1 } else { d })
                    } else {
                        Val::I(if adjust { r + y } else { r })
                    }
                }
                BinOp::Lt => Val::B(x < y),
                BinOp::Le => Val::B(x <= y),
                BinOp::Gt => Val::B(x > y),
                BinOp::Ge => Val::B(x >= y),
                BinOp::Eq => Val::B(x == y),
                BinOp::Ne => Val::B(x != y),
            }
        }
        Expr::Call(f, a, b) => {
            if depth >= MAX_CALL_DEPTH {
                return Err("mask functions call each other too deeply".into());
            }
            let qa = int(eval(a, funcs, q, k, depth)?);
            let kb = int(eval(b, funcs, q, k, depth)?);
            eval(&funcs[*f].body, funcs, qa, kb, depth + 1)?
        }
        Expr::Combine(conj, fs) => {
            let mut acc = *conj;
            for f in fs {
                if depth >= MAX_CALL_DEPTH {
                    return Err("mask functions call each other too deeply".into());
                }
                let v = boolean(eval(&funcs[*f].body, funcs, q, k, depth + 1)?);
                acc = if *conj { acc & v } else { acc | v };
            }
            Val::B(acc)
        }
    })
}
