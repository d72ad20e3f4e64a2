//! The closed form: one `mask_mod` expression per catalog preset, written from its formula or slot structure.

use super::*;

pub(super) const Q: &str = "q_idx";
pub(super) const K: &str = "kv_idx";

/// `(a op b)`: comparisons are always parenthesised (Python's `&` binds tighter than `<=`).
pub(super) fn cmp(a: impl std::fmt::Display, op: &str, b: impl std::fmt::Display) -> String {
    format!("({a} {op} {b})")
}

pub(super) fn join(terms: Vec<String>, op: &str, empty: &str) -> String {
    match terms.len() {
        0 => empty.to_string(),
        1 => terms.into_iter().next().unwrap_or_default(),
        _ => format!("({})", terms.join(&format!(" {op} "))),
    }
}

/// Conjunction (`True` when empty, written so that it broadcasts).
pub(super) fn all(terms: Vec<String>) -> String {
    join(terms, "&", "((q_idx >= 0) & (kv_idx >= 0))")
}

/// Disjunction (`False` when empty, written so that it broadcasts).
pub(super) fn any(terms: Vec<String>) -> String {
    join(terms, "|", "((q_idx < 0) & (kv_idx < 0))")
}

/// `var + c` with the sign folded in.
pub(super) fn shift(var: &str, c: i64) -> String {
    match c {
        0 => var.to_string(),
        c if c > 0 => format!("({var} + {c})"),
        c => format!("({var} - {})", c.unsigned_abs()),
    }
}

/// A closed-form `mask_mod` body for the file, or why there is none.
///
/// # Errors
/// The reason the lookup form is needed (no provenance, mask edited since, a random preset, ...).
pub fn closed_form(file: &MaskFile) -> Result<String, String> {
    let p = file.provenance.as_ref().ok_or("no provenance: the mask was not made from a preset")?;
    let params = provenance_params(p);
    let built = build_preset(&p.preset, p.n, &params, MAX_N)
        .map_err(|e| format!("provenance does not rebuild a preset ({e})"))?;
    if built != file.mask {
        return Err(format!("the mask differs from preset '{}' recorded in its provenance (edited?)", p.preset));
    }
    preset_expression(&p.preset, p.n, &params, &file.mask)
}

/// The closed-form expression of a preset built with `params` (already validated: `mask` is the
/// preset's mask, used only to read BigBird's random blocks off it).
///
/// # Errors
/// Why this preset (or these parameters) has no closed form.
pub fn preset_expression(
    name: &str,
    n: usize,
    params: &BTreeMap<String, String>,
    mask: &BitMatrix,
) -> Result<String, String> {
    let spec = preset_spec(name).ok_or_else(|| format!("unknown preset '{name}'"))?;
    let text = |key: &str| -> String {
        params
            .get(key)
            .cloned()
            .or_else(|| spec.params.iter().find(|p| p.name == key).map(|p| p.default.to_string()))
            .unwrap_or_default()
    };
    let int = |key: &str| -> Result<i64, String> {
        text(key).trim().parse::<i64>().map_err(|_| format!("parameter '{key}' is not an integer"))
    };
    let flag = |key: &str| matches!(text(key).trim(), "true" | "1" | "yes");
    let list = |key: &str| -> Vec<i64> {
        text(key).split(',').map(str::trim).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect()
    };
    let causal = || cmp(K, "<=", Q);
    let diff = format!("({Q} - {K})");
    let expr = match name {
        "full" => all(vec![]),
        "causal" => causal(),
        "strictly-causal" => cmp(K, "<", Q),
        "anti-causal" => cmp(K, ">=", Q),
        "identity" => cmp(K, "==", Q),
        "cycle" => cmp(K, "==", format!("({} % {n})", shift(Q, n as i64 - 1))),
        "sliding-window" => all(vec![causal(), cmp(&diff, "<", int("w")?)]),
        "bidirectional-window" => {
            let r = int("r")?;
            all(vec![cmp(&diff, "<=", r), cmp(format!("({K} - {Q})"), "<=", r)])
        }
        "dilated-window" => {
            let (w, d) = (int("w")?, int("d")?);
            all(vec![causal(), cmp(format!("({diff} % {d})"), "==", 0), cmp(&diff, "<=", (w - 1) * d)])
        }
        "chunked-causal" => {
            let c = int("c")?;
            all(vec![causal(), cmp(format!("({K} // {c})"), "==", format!("({Q} // {c})"))])
        }
        "block-causal" => {
            let s = int("s")?;
            cmp(format!("({K} // {s})"), "<=", format!("({Q} // {s})"))
        }
        "prefix-lm" => any(vec![causal(), cmp(K, "<", int("p")?)]),
        "document" => {
            let segments = list("segments");
            let mut terms = if segments.is_empty() {
                let len = int("length")?;
                vec![cmp(format!("({Q} // {len})"), "==", format!("({K} // {len})"))]
            } else {
                if segments.len() > MAX_TERMS {
                    return Err(format!("{} segments (a closed form is written up to {MAX_TERMS})", segments.len()));
                }
                // Same segment iff q and k lie on the same side of every inner boundary.
                let mut start = 0;
                let mut terms = Vec::new();
                for len in &segments[..segments.len() - 1] {
                    start += len;
                    terms.push(cmp(cmp(Q, ">=", start), "==", cmp(K, ">=", start)));
                }
                terms
            };
            if flag("causal") {
                terms.push(causal());
            }
            all(terms)
        }
        "sink-window" => all(vec![causal(), any(vec![cmp(K, "<", int("sinks")?), cmp(&diff, "<", int("w")?)])]),
        "longformer" => {
            let (g, r) = (int("g")?, int("r")?);
            any(vec![
                all(vec![cmp(&diff, "<=", r), cmp(format!("({K} - {Q})"), "<=", r)]),
                cmp(Q, "<", g),
                cmp(K, "<", g),
            ])
        }
        "bigbird" => bigbird(n, int("b")?, int("r")?, int("g")?, mask)?,
        "strided" => {
            let l = int("l")?;
            all(vec![causal(), any(vec![cmp(&diff, "<", l), cmp(format!("({diff} % {l})"), "==", 0)])])
        }
        "fixed" => {
            let (l, c) = (int("l")?, int("c")?);
            all(vec![
                causal(),
                any(vec![
                    cmp(format!("({K} // {l})"), "==", format!("({Q} // {l})")),
                    cmp(format!("({K} % {l})"), ">=", l - c),
                ]),
            ])
        }
        "xlnet" => {
            let perm = list("perm");
            if !perm.is_empty() && perm.iter().enumerate().any(|(i, &t)| t != i as i64) {
                return Err("a non-identity factorization order needs a rank table".into());
            }
            two_stream(&BlockTwoStream::new(n, 1))?
        }
        "block-two-stream" => {
            let inner = |v: String| if v.trim() == "causal" { Inner::Causal } else { Inner::Full };
            two_stream(&BlockTwoStream {
                n,
                block: usize::try_from(int("s")?).map_err(|_| "negative block size")?,
                clean: inner(text("clean")),
                query: inner(text("query")),
                prompt: usize::try_from(int("prompt")?).map_err(|_| "negative prompt")?,
                drop_last: flag("drop_last"),
                order: if text("order").trim() == "interleaved" {
                    TwoStreamOrder::Interleaved
                } else {
                    TwoStreamOrder::Grouped
                },
            })?
        }
        "butterfly" => butterfly(&Butterfly { n, minimal: flag("minimal") }),
        "random" => return Err("random entries have no closed form".into()),
        other => return Err(format!("preset '{other}' has no closed form yet")),
    };
    Ok(expr)
}

/// BigBird: the window and global blocks in closed form, the random blocks read off the mask and
/// OR-ed in, grouped by query block.
pub(super) fn bigbird(n: usize, b: i64, r: i64, g: i64, mask: &BitMatrix) -> Result<String, String> {
    let (qb, kb) = (format!("({Q} // {b})"), format!("({K} // {b})"));
    let mut terms = vec![
        all(vec![cmp(format!("({qb} - {kb})"), "<=", r), cmp(format!("({kb} - {qb})"), "<=", r)]),
        cmp(&qb, "<", g),
        cmp(&kb, "<", g),
    ];
    let bs = usize::try_from(b).map_err(|_| "negative block size")?.max(1);
    let blocks = n.div_ceil(bs) as i64;
    let mut random = 0;
    for bq in 0..blocks {
        let mut keys = Vec::new();
        for bk in 0..blocks {
            let deterministic = (bq - bk).abs() <= r || bq < g || bk < g;
            if !deterministic && mask.get((bq * b) as usize, (bk * b) as usize) {
                keys.push(cmp(&kb, "==", bk));
            }
        }
        if !keys.is_empty() {
            random += keys.len();
            terms.push(all(vec![cmp(&qb, "==", bq), any(keys)]));
        }
    }
    if random > MAX_TERMS {
        return Err(format!("{random} random blocks (a closed form is written up to {MAX_TERMS})"));
    }
    Ok(any(terms))
}

/// Block two-stream (and XLNet in the identity order) from its slot structure.
pub(super) fn two_stream(t: &BlockTwoStream) -> Result<String, String> {
    let (s, p) = (t.block as i64, t.prompt as i64);
    let causal = || cmp(K, "<=", Q);
    // Everything non-prompt reads the prompt; inside the prompt, attention is `clean`. A prompt
    // key k < p satisfies k <= q for every non-prompt q, so causal reduces to `k <= q`.
    let mut terms = Vec::new();
    if p > 0 {
        terms.push(match t.clean {
            Inner::Full => cmp(K, "<", p),
            Inner::Causal => all(vec![cmp(K, "<", p), causal()]),
        });
    }
    let after_prompt = |v: &str| if p > 0 { vec![cmp(v, ">=", p)] } else { vec![] };
    match t.order {
        TwoStreamOrder::Grouped => {
            let content = t.slots().iter().filter(|x| matches!(x, crate::presets::TwoStreamSlot::Content(_))).count();
            let qstart = p + content as i64;
            let is_content = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(v, "<", qstart));
                c
            };
            let is_query = |v: &str| vec![cmp(v, ">=", qstart)];
            let content_block = |v: &str| format!("({} // {s})", shift(v, -p));
            let query_block = |v: &str| format!("({} // {s})", shift(v, -qstart));
            // Content reads content: block-causal, or plain causal when clean blocks are causal
            // (content positions increase with the token, blocks are contiguous).
            let mut cc = [is_content(Q), is_content(K)].concat();
            cc.push(match t.clean {
                Inner::Full => cmp(content_block(K), "<=", content_block(Q)),
                Inner::Causal => causal(),
            });
            terms.push(all(cc));
            let mut qc = [is_query(Q), is_content(K)].concat();
            qc.push(cmp(content_block(K), "<", query_block(Q)));
            terms.push(all(qc));
            let mut qq = [is_query(Q), is_query(K)].concat();
            qq.push(cmp(query_block(K), "==", query_block(Q)));
            if t.query == Inner::Causal {
                qq.push(causal());
            }
            terms.push(all(qq));
        }
        TwoStreamOrder::Interleaved => {
            if !t.n.is_multiple_of(t.block) || t.drop_last {
                return Err("interleaved order with a partial or dropped last block needs a lookup".into());
            }
            // After the prompt, block b is [K_b (s positions) | Q_b (s positions)].
            let period = 2 * s;
            let local = |v: &str| format!("({} % {period})", shift(v, -p));
            let block = |v: &str| format!("({} // {period})", shift(v, -p));
            let is_content = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(local(v), "<", s));
                c
            };
            let is_query = |v: &str| {
                let mut c = after_prompt(v);
                c.push(cmp(local(v), ">=", s));
                c
            };
            let mut cc = [is_content(Q), is_content(K)].concat();
            cc.push(match t.clean {
                Inner::Full => cmp(block(K), "<=", block(Q)),
                Inner::Causal => causal(),
            });
            terms.push(all(cc));
            let mut qc = [is_query(Q), is_content(K)].concat();
            qc.push(cmp(block(K), "<", block(Q)));
            terms.push(all(qc));
            let mut qq = [is_query(Q), is_query(K)].concat();
            qq.push(cmp(block(K), "==", block(Q)));
            if t.query == Inner::Causal {
                qq.push(causal());
            }
            terms.push(all(qq));
        }
    }
    Ok(any(terms))
}

/// Butterfly from its slot structure `[F | B | P]`.
pub(super) fn butterfly(b: &Butterfly) -> String {
    let n = b.n as i64;
    let m = i64::from(b.minimal);
    let (nf, nb) = (n - m, n - m);
    let pstart = nf + nb;
    let in_b = |v: &str| vec![cmp(v, ">=", nf), cmp(v, "<", pstart)];
    // F reads F: causal. B reads B: anti-causal. P_t reads F_u (u < t), B_u (u > t), itself.
    let ff = all(vec![cmp(Q, "<", nf), cmp(K, "<=", Q)]);
    let bb = all([in_b(Q), vec![cmp(K, ">=", Q), cmp(K, "<", pstart)]].concat());
    let pf = all(vec![cmp(Q, ">=", pstart), cmp(K, "<", nf), cmp(K, "<", shift(Q, -pstart))]);
    // B position i holds token i - nf + m; P position i holds token i - pstart.
    let pb = all([vec![cmp(Q, ">=", pstart)], in_b(K), vec![cmp(shift(K, m - nf), ">", shift(Q, -pstart))]].concat());
    let pp = all(vec![cmp(Q, ">=", pstart), cmp(K, "==", Q)]);
    any(vec![ff, bb, pf, pb, pp])
}
