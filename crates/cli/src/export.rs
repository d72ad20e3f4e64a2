//! What `export` and `convert` write: the `--to` targets of `export` (the core's export kinds
//! and the CLI's drawings) and the mask file formats of `convert`, `preset` and `op`.

use anyhow::Result;
use clap::ValueEnum;
use hasseflow_core::Analysis;
use hasseflow_core::format::{self, Encoding, MaskFile};
use hasseflow_core::interop;

use crate::{OutFormat, png};

/// What `export --to` produces: one of the core's exports (named and described by the core), or
/// a drawing only the CLI renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExportTarget {
    /// A core export ([`interop::export`]).
    Core(interop::ExportKind),
    /// The Hasse diagram as SVG, laid out by hasseflow-render.
    Svg,
    /// The grid as a PNG image.
    Png,
}

impl ExportTarget {
    /// Every target, in `--help` order: the core's kinds, then the drawings.
    const ALL: [ExportTarget; interop::ExportKind::ALL.len() + 2] = {
        let core = interop::ExportKind::ALL;
        let mut all = [ExportTarget::Svg; interop::ExportKind::ALL.len() + 2];
        let mut i = 0;
        while i < core.len() {
            all[i] = ExportTarget::Core(core[i]);
            i += 1;
        }
        all[core.len()] = ExportTarget::Svg;
        all[core.len() + 1] = ExportTarget::Png;
        all
    };

    /// The `--to` name.
    fn name(self) -> &'static str {
        match self {
            ExportTarget::Core(kind) => kind.name(),
            ExportTarget::Svg => "svg",
            ExportTarget::Png => "png",
        }
    }

    /// One line for `--help`.
    fn summary(self) -> &'static str {
        match self {
            ExportTarget::Core(kind) => kind.summary(),
            ExportTarget::Svg => "the Hasse diagram as an SVG drawing (bottom to top)",
            ExportTarget::Png => "the grid as a PNG image (row q, column k; dark = reads)",
        }
    }
}

impl ValueEnum for ExportTarget {
    fn value_variants<'a>() -> &'a [Self] {
        &ExportTarget::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.summary()))
    }
}

/// The bytes of one export: the core's formats, plus the Hasse diagram as SVG (laid out by
/// hasseflow-render) and the grid as PNG.
pub(crate) fn export(file: &MaskFile, to: ExportTarget, block_size: usize) -> Result<Vec<u8>> {
    match to {
        ExportTarget::Core(kind) => Ok(interop::export(file, kind, block_size)?),
        ExportTarget::Svg => {
            let analysis = Analysis::new(&file.mask);
            let input = hasseflow_render::HasseInput::from_analysis(&analysis, file.labels.as_deref());
            let scene = hasseflow_render::layout(&input, &hasseflow_render::LayoutOptions::default());
            Ok(hasseflow_render::to_svg(&scene, &hasseflow_render::SvgTheme::light()).into_bytes())
        }
        ExportTarget::Png => png::grid_png(&file.mask),
    }
}

pub(crate) fn render(file: &MaskFile, format: OutFormat, encoding: Encoding) -> String {
    match format {
        OutFormat::Json => format::write_json(file, encoding),
        OutFormat::Text => format::write_grid(&file.mask),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_targets_are_the_core_kinds_then_the_drawings_with_distinct_names() {
        let core: Vec<_> = interop::ExportKind::ALL.iter().map(|&k| ExportTarget::Core(k)).collect();
        assert_eq!(&ExportTarget::ALL[..core.len()], &core[..]);
        assert_eq!(&ExportTarget::ALL[core.len()..], &[ExportTarget::Svg, ExportTarget::Png]);
        let mut names: Vec<_> = ExportTarget::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ExportTarget::ALL.len());
        for t in ExportTarget::ALL {
            assert_eq!(ExportTarget::from_str(t.name(), false), Ok(t));
        }
    }
}
