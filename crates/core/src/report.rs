//! The analysis reports as JSON: the one schema of `hasseflow analyze --json` and of the Python
//! package's results. A dense mask gets [`analysis_json`] (plus [`stack_json`] for a layer stack);
//! interval rows on the structured engine get [`structured_json`], at the depth [`reach_auto`]
//! chooses.

use serde_json::{Value, json};

use crate::format::MaskFile;
use crate::interop::MaskModReport;
use crate::reach::ReachReport;
pub use crate::reach::{MAX_AUTO_LAYERS, reach_auto, reach_auto_while};
use crate::{Analysis, FirstReach, LayerStack, StackMode};

/// `part` of `whole` as a percentage with `decimals` decimals (at most 8), rounded down: a share
/// short of the whole never reads "100.00%" (the app's and the CLI's coverage of a layer).
/// `whole = 0` reads as 1.
pub fn percent(part: u64, whole: u64, decimals: u32) -> String {
    let decimals = decimals.min(8);
    let unit = 10u128.pow(decimals);
    let scaled = u128::from(part) * 100 * unit / u128::from(whole.max(1));
    if decimals == 0 {
        return format!("{scaled}%");
    }
    format!("{}.{:0width$}%", scaled / unit, scaled % unit, width = decimals as usize)
}

/// A share `fraction` (0 to 1) as a percentage with `decimals` decimals (at most 8), rounded down
/// as [`percent`] rounds: a share short of 1 never reads "100.00%" (the Flow view's rollout
/// agreement, a fraction with no counts behind it). A product that float arithmetic leaves a hair
/// under a whole step (0.29 · 100 = 28.999…) still reads as that step.
pub fn percent_of_share(fraction: f64, decimals: u32) -> String {
    let decimals = decimals.min(8);
    let unit = 10u64.pow(decimals);
    let whole = 100 * unit;
    let fraction = if fraction.is_nan() { 0.0 } else { fraction.clamp(0.0, 1.0) };
    let mut scaled = ((fraction * whole as f64) * (1.0 + 1e-12)).floor() as u64;
    if fraction < 1.0 {
        scaled = scaled.min(whole - 1);
    }
    percent(scaled, whole, decimals)
}

/// The dense report. Fields: n, entries, density, depth, dense, limit (row strings, left out
/// with `with_limit = false`), classes, hasse_edges, height, width, growth, labels (when the file
/// has them), first_reach (on request).
pub fn analysis_json(file: &MaskFile, a: &Analysis, first_reach: Option<&FirstReach>, with_limit: bool) -> Value {
    let mask = &file.mask;
    let mut v = json!({
        "n": a.n(),
        "entries": mask.count_ones(),
        "density": mask.density(),
        "depth": a.depth(),
        "dense": a.is_dense(),
        "classes": a.classes(),
        "hasse_edges": a.hasse_edges().iter().map(|&(x, y)| [x, y]).collect::<Vec<_>>(),
        "height": a.height(),
        "width": a.width(),
        "growth": a.growth(),
    });
    if with_limit {
        v["limit"] = json!(a.closure().to_row_strings());
    }
    if let Some(labels) = &file.labels {
        v["labels"] = json!(labels);
    }
    if let Some(d) = first_reach {
        v["first_reach"] = json!((0..d.n()).map(|q| d.row(q).collect::<Vec<_>>()).collect::<Vec<_>>());
    }
    if let Some((stack, mode)) = &file.stack {
        v["stack"] = stack_json(stack, *mode, with_limit);
    }
    v
}

/// The stack part of the report: mode, layer and head counts, depth, growth, limit rows (with
/// `with_limit`).
pub fn stack_json(stack: &LayerStack, mode: StackMode, with_limit: bool) -> Value {
    let s = stack.analyze(mode);
    let mut v = json!({
        "mode": match mode { StackMode::Once => "once", StackMode::Repeat => "repeat" },
        "layers": stack.layers().len(),
        "heads": stack.layers().iter().map(|l| l.heads.len()).collect::<Vec<_>>(),
        "depth": s.depth,
        "growth": s.growth,
    });
    if with_limit {
        v["limit"] = json!(s.limit.to_row_strings());
    }
    v
}

/// The structured engine's report: `engine`, `depth` (`L*`, null when the stack never reaches
/// the limit), `reach` (the [`ReachReport`]) and, for a mask_mod, what its text did
/// (`mask_mod`: name, b, h, which of them it reads, skipped lines).
pub fn structured_json(report: &ReachReport, mask_mod: Option<(&MaskModReport, u64, u64)>) -> Value {
    let mut v = json!({
        "engine": "structured",
        "depth": report.full_at,
        "reach": serde_json::to_value(report).unwrap_or(Value::Null),
    });
    if let Some((rep, b, h)) = mask_mod {
        v["mask_mod"] = json!({
            "name": rep.name, "batch": b, "head": h, "uses_batch": rep.uses_batch, "uses_head": rep.uses_head,
            "skipped": rep.skipped.iter().map(|(l, c, w)| json!({"line": l, "column": c, "why": w})).collect::<Vec<_>>(),
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitMatrix;

    #[test]
    fn percentages_round_down_and_reach_100_only_when_full() {
        let mut rng = crate::rng::SplitMix64::new(31);
        for i in 0..20_000u64 {
            // Wholes up to 2^60 (a 2^30-position run), parts near the whole half of the time.
            let whole = 1 + rng.next_u64() % (1u64 << (1 + i % 60));
            let part = if i % 2 == 0 { whole - rng.next_u64() % whole.min(5) } else { rng.next_u64() % (whole + 1) };
            let text = percent(part, whole, 2);
            assert_eq!(text == "100.00%", part == whole, "{part} / {whole} printed {text}");
            // text <= exact ratio < text + 0.01, checked in exact integers.
            let (int, frac) = text.trim_end_matches('%').split_once('.').expect("two decimals");
            assert_eq!(frac.len(), 2);
            let units: u128 = int.parse::<u128>().unwrap() * 100 + frac.parse::<u128>().unwrap();
            let exact = part as u128 * 10_000;
            assert!(units * whole as u128 <= exact && exact < (units + 1) * whole as u128, "{part} / {whole}: {text}");
        }
        assert_eq!(percent(5, 7, 0), "71%");
    }

    #[test]
    fn shares_round_down_and_reach_100_only_when_whole() {
        assert_eq!(percent_of_share(1.0, 2), "100.00%");
        assert_eq!(percent_of_share(1.0 - 1.0 / 262_144.0, 2), "99.99%");
        assert_eq!(percent_of_share(0.29, 2), "29.00%");
        assert_eq!(percent_of_share(0.123_456, 3), "12.345%");
        assert_eq!(percent_of_share(0.0, 2), "0.00%");
        assert_eq!(percent_of_share(f64::NAN, 1), "0.0%");
        assert_eq!(percent_of_share(2.0, 0), "100%");
        for i in 0..=1000u64 {
            let f = i as f64 / 1000.0;
            assert_eq!(percent_of_share(f, 1), percent(i, 1000, 1), "{f}");
        }
    }

    #[test]
    fn percent_never_rounds_up() {
        assert_eq!(percent(99_999, 100_000, 2), "99.99%");
        assert_eq!(percent(u64::MAX - 1, u64::MAX, 2), "99.99%");
        assert_eq!(percent(7, 7, 2), "100.00%");
        assert_eq!(percent(1, 3, 2), "33.33%");
        assert_eq!(percent(2, 3, 2), "66.66%");
        assert_eq!(percent(0, 0, 2), "0.00%");
        // Mistral 7B at 131072: 496 cells short of 8,590,000,128.
        assert_eq!(percent(8_590_000_128 - 496, 8_590_000_128, 4), "99.9999%");
        assert_eq!(format!("{:.4}%", 100.0 * (8_590_000_128.0 - 496.0) / 8_590_000_128.0), "100.0000%");
        assert_eq!(percent(1999, 2000, 1), "99.9%");
        assert_eq!(percent(1999, 2000, 0), "99%");
        assert_eq!(percent(3, 8, 8), "37.50000000%");
        assert_eq!(percent(2, 7, 1), "28.5%", "floor, where the float formatting gives 28.6%");
        // Against the float formatting it replaces, where that rounds down anyway.
        for (part, whole, d) in [(1u64, 8u64, 2u32), (5, 16, 2), (123, 1000, 2), (1, 1, 2), (1, 3, 4), (1, 4, 1)] {
            let float = format!("{:.*}%", d as usize, 100.0 * part as f64 / whole as f64);
            assert_eq!(percent(part, whole, d), float);
        }
    }

    #[test]
    fn the_report_leaves_the_limit_out_on_request() {
        let file = MaskFile::new(BitMatrix::from_fn(5, |q, k| k <= q));
        let a = Analysis::new(&file.mask);
        assert_eq!(analysis_json(&file, &a, None, true)["limit"][4], "11111");
        assert!(analysis_json(&file, &a, None, false).get("limit").is_none());
        assert_eq!(analysis_json(&file, &a, None, false)["depth"], 1);
    }
}
