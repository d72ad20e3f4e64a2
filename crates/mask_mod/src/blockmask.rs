//! The native half of the BlockMask prelude (`library/block_mask.py`): the number of attended
//! cells in every block of a mask_mod, as torch's `create_block_mask` counts them before it
//! splits blocks into full and partial. The mask_mod is traced once, as `vmap` calls it, and its
//! rows are evaluated by the interval evaluator at each `(b, h)`; so every mask the reader takes
//! (vector values included) gives its block tables.

use super::args::{Args, to_int};
use super::rt::{Eval, Interp, R, exc, limit, unsup};
use super::tensor::{DType, Sc, Tensor, checked_numel};
use super::trace::{Op, RowError, RowEval};
use super::value::Value;

/// Most `(b, h, q)` rows one call evaluates.
const MAX_ROWS: usize = 1 << 20;

/// `hasseflow.block_counts(mask_mod, B, H, Q_LEN, KV_LEN, Q_BLOCK, KV_BLOCK[, caller])`: an int64
/// tensor of shape `(B, H, ceil(Q/Q_BLOCK), ceil(KV/KV_BLOCK))`; `caller` (`create_block_mask` by
/// default, or `create_mask`, whose blocks are 1 x 1) names the call in messages.
pub(super) fn block_counts(it: &mut Interp, a: &Args) -> R<Value> {
    let pos = a.at;
    let f = a.need(0, "mask_mod")?;
    let caller = match a.get(7, "caller") {
        Some(Value::Str(s)) => s,
        _ => "create_block_mask".into(),
    };
    let names = ["B", "H", "Q_LEN", "KV_LEN", "Q_BLOCK", "KV_BLOCK"];
    let mut d = [0usize; 6];
    for (k, name) in names.iter().enumerate() {
        let v = to_int(&a.need(k + 1, name)?, pos)?;
        if v < 0 || (k != 2 && k != 3 && v == 0) {
            return exc(pos, format!("{caller}: {name} = {v} is out of range (ValueError)"));
        }
        d[k] = v as usize;
    }
    let [nb, nh, nq_len, nkv, qbs, kbs] = d;
    let rows = nb.checked_mul(nh).and_then(|x| x.checked_mul(nq_len)).filter(|&r| r <= MAX_ROWS);
    let Some(rows) = rows else {
        return limit(pos, format!("{caller} over more than {MAX_ROWS} rows of (b, h, q)"));
    };
    if nkv > 1 << 24 {
        return limit(pos, format!("{caller} over more than 2^24 keys"));
    }
    it.charge(pos, rows)?;
    let (nq, nk) = (nq_len.div_ceil(qbs), nkv.div_ceil(kbs));
    let shape = vec![nb, nh, nq, nk];
    checked_numel(&shape).or_else(|m| limit(pos, format!("{caller}: {m}")))?;
    it.charge(pos, nb * nh * nq * nk)?;
    let args: Vec<Value> = (0..4).map(|i| Value::Traced(i, DType::I64)).collect();
    let root = match it.call(&f, args, Vec::new(), pos)? {
        Value::Traced(id, DType::Bool) => id,
        Value::Tensor(t) if t.borrow().shape.is_empty() && t.borrow().dtype == DType::Bool => {
            let v = t.borrow().data[0];
            if super::tensor::is_unset(v) {
                return unsup(pos, format!("{caller}: the mask_mod returns a tensor from torch.empty never written"));
            }
            it.graph.push(Op::Const(v), DType::Bool, pos).or_else(|m| limit(pos, m))?
        }
        other => {
            return exc(pos, format!("{caller}: the mask_mod returns a {}, not a boolean tensor", other.type_name()));
        }
    };
    let mut counts = vec![0i64; nb * nh * nq * nk];
    let fail = |it: &Interp, e: RowError| match e {
        RowError::Cell { q, k, node, what } => {
            let p = it.graph.nodes[node].pos;
            exc(p, format!("{what} (at q_idx = {q}, kv_idx = {k}, while {caller} evaluated the mask_mod)"))
        }
        RowError::TooManyIntervals { .. } => limit(pos, format!("{caller}: a row too irregular")),
        RowError::OverBudget => limit(pos, format!("{caller}: the mask_mod's evaluation ran over its time budget")),
    };
    let mut out = Vec::new();
    for b in 0..nb {
        for h in 0..nh {
            let mut ev = match RowEval::new(&it.graph, root, b as i64, h as i64) {
                Ok(ev) => ev,
                Err(e) => return fail(it, e),
            };
            for q in 0..if nkv == 0 { 0 } else { nq_len } {
                if let Err(e) = ev.row(q as u64, nkv as u64, usize::MAX, &mut out) {
                    return fail(it, e);
                }
                let base = ((b * nh + h) * nq + q / qbs) * nk;
                for &[lo, hi] in &out {
                    let (lo, hi) = (lo as usize, hi as usize);
                    for kb in lo / kbs..=hi / kbs {
                        let from = lo.max(kb * kbs);
                        let to = hi.min((kb + 1) * kbs - 1);
                        counts[base + kb] += (to + 1 - from) as i64;
                    }
                }
            }
        }
    }
    let data = counts.into_iter().map(Sc::I).collect();
    Ok(Value::tensor(Tensor::new(DType::I64, shape, data)))
}
