//! The `analyze` subcommand: the core's `Analysis` of a mask file, printed by `report`.

use anyhow::{Context, Result};
use hasseflow_core::{Analysis, FirstReach};

use crate::{Input, print_out, read_mask, report};

pub(crate) fn analyze(input: &Input, json_out: bool, with_first_reach: bool) -> Result<()> {
    let file = read_mask(input)?;
    let analysis = Analysis::new(&file.mask);
    let first_reach = with_first_reach.then(|| FirstReach::new(&file.mask));
    let text = if json_out {
        let mut v = report::analysis_json(&file, &analysis, first_reach.as_ref());
        if let Some((stack, mode)) = &file.stack {
            v["stack"] = report::stack_json(stack, *mode);
        }
        let mut s = serde_json::to_string(&v).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        report::analysis_text(&file, &analysis, first_reach.as_ref())
    };
    print_out(&text);
    Ok(())
}
