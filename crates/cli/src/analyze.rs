//! The `analyze` subcommand: the core's `Analysis` of a mask file, printed by `report`.

use anyhow::{Context, Result, bail};
use hasseflow_core::format::{MAX_INPUT_BYTES, MAX_N};
use hasseflow_core::interop::{MaskMod, is_mask_mod};
use hasseflow_core::reach::ReachReport;
use hasseflow_core::{Analysis, FirstReach};
use serde_json::json;

use crate::{Input, print_out, read_limited, read_mask, report};

pub(crate) fn analyze(input: &Input, json_out: bool, with_first_reach: bool, layers: Option<usize>) -> Result<()> {
    if input.n.is_some_and(|n| n > MAX_N) || layers.is_some() {
        return structured(input, json_out, layers);
    }
    let file = read_mask(input)?;
    let analysis = Analysis::new(&file.mask);
    let first_reach = with_first_reach.then(|| FirstReach::new(&file.mask));
    let text = if json_out {
        let v = hasseflow_core::report::analysis_json(&file, &analysis, first_reach.as_ref(), true);
        let mut s = serde_json::to_string(&v).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        report::analysis_text(&file, &analysis, first_reach.as_ref())
    };
    print_out(&text);
    Ok(())
}

/// A mask_mod above the dense limit (or with `--layers`): its interval rows on the structured
/// engine, `--layers` copies deep (else the depth that reaches the limit, up to 64).
fn structured(input: &Input, json_out: bool, layers: Option<usize>) -> Result<()> {
    let name = if input.file == "-" { "<stdin>" } else { &input.file };
    let bytes = read_limited(&input.file, MAX_INPUT_BYTES)?;
    if !is_mask_mod(&bytes) {
        bail!("{name}: above n = {MAX_N} (or with --layers) only a mask_mod is analysed, on the structured engine");
    }
    let text = std::str::from_utf8(&bytes).with_context(|| format!("{name}: not UTF-8"))?;
    let m = MaskMod::parse(text).map_err(|e| anyhow::anyhow!("{name}: mask_mod not imported: {e}"))?;
    let n = m.size(input.n).map_err(|e| anyhow::anyhow!("{name}: {e}"))? as u64;
    let start = std::time::Instant::now();
    let r = m.reach(n, input.batch, input.head, layers).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let rep = m.report();
    if json_out {
        let mut v = hasseflow_core::report::structured_json(&r, Some((&rep, input.batch, input.head)));
        v["timings_ms"] = json!({"total": ms});
        print_out(&format!("{v}\n"));
    } else {
        print_out(&structured_text(&m, &r, input, ms));
    }
    Ok(())
}

fn structured_text(m: &MaskMod, r: &ReachReport, input: &Input, ms: f64) -> String {
    let rep = m.report();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<12} {v}\n"));
    line("mask_mod", format!("{} at b = {}, h = {}", rep.name, input.batch, input.head));
    if rep.uses_batch || rep.uses_head {
        let which: Vec<&str> =
            [(rep.uses_batch, "b"), (rep.uses_head, "h")].iter().filter(|x| x.0).map(|x| x.1).collect();
        line("depends on", format!("{} (--batch/--head pick another mask)", which.join(" and ")));
    }
    for (l, c, why) in &rep.skipped {
        line("skipped", format!("line {l}, column {c}: {why}"));
    }
    line("n", format!("{} (structured engine)", r.n));
    line("layers", r.depth.to_string());
    line(
        "L*",
        r.full_at
            .map_or_else(|| format!("over {} (the limit is not reached; give --layers)", r.depth), |d| d.to_string()),
    );
    let growth: Vec<String> = r.growth.iter().enumerate().map(|(l, c)| format!("L{l}:{c}")).collect();
    line("reached", report::elide(growth, r.growth.len()));
    line("limit", format!("{} cells", r.limit_cells));
    let classes = r.limit.classes.map_or_else(|| "-".to_string(), |c| c.to_string());
    line("classes", classes);
    let hasse = crate::report::hasse_summary(&r.limit);
    line("hasse", hasse);
    line("time", format!("{ms:.1} ms (rows and reach)"));
    out
}
