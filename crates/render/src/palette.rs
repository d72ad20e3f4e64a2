//! Colours of the app and of the pictures: a viridis ramp for first-reach layers (perceptually ordered and colour-blind safe),
//! Okabe-Ito vermillion for "new at this layer", and light/dark neutrals.

/// Light or dark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    /// Dark ink on a light page.
    Light,
    /// Light ink on a dark page.
    Dark,
}

/// An RGB colour.
pub type Rgb = (u8, u8, u8);

/// Viridis, sampled at 9 stops from 0 to 0.9 (the last tenth is too pale on white).
const VIRIDIS: [Rgb; 9] = [
    (68, 1, 84),
    (71, 39, 119),
    (62, 73, 137),
    (49, 104, 142),
    (38, 130, 142),
    (31, 158, 137),
    (53, 183, 121),
    (110, 206, 88),
    (181, 222, 43),
];

/// Colours of one theme.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    /// Cells never reached at this layer.
    pub empty: Rgb,
    /// Mask entries not reached yet (only at `L = 0`).
    pub pending: Rgb,
    /// Cells first reached at the current layer.
    pub new_cell: Rgb,
    /// The diagonal (layer 0).
    pub self_cell: Rgb,
    /// Page behind the grid.
    pub background_css: &'static str,
    /// Cell borders.
    pub gridline_css: &'static str,
    /// Hovered class rows/columns.
    pub highlight_css: &'static str,
    /// Hovered cell row/column.
    pub hover_band_css: &'static str,
    /// Ruler background.
    pub ruler_css: &'static str,
    /// Text.
    pub ink_css: &'static str,
    /// Secondary text.
    pub muted_css: &'static str,
    /// Accent.
    pub accent_css: &'static str,
    /// Where the layer ramp starts on viridis (later on dark pages: its dark purple end would
    /// vanish into the background).
    pub ramp_start: f64,
}

impl Palette {
    /// The palette of `theme`.
    pub fn of(theme: Theme) -> Palette {
        match theme {
            Theme::Light => Palette {
                empty: (255, 255, 255),
                pending: (215, 220, 226),
                new_cell: (213, 94, 0),
                self_cell: (120, 126, 134),
                background_css: "#fbfbf9",
                gridline_css: "rgba(29,35,42,0.14)",
                highlight_css: "rgba(0,114,178,0.22)",
                hover_band_css: "rgba(230,159,0,0.16)",
                ruler_css: "#f0f1ee",
                ink_css: "#1d232a",
                muted_css: "#5b6570",
                accent_css: "#0072b2",
                ramp_start: 0.0,
            },
            Theme::Dark => Palette {
                empty: (32, 36, 41),
                pending: (70, 78, 88),
                new_cell: (230, 110, 20),
                self_cell: (150, 156, 164),
                background_css: "#15181b",
                gridline_css: "rgba(230,232,234,0.12)",
                highlight_css: "rgba(86,180,233,0.25)",
                hover_band_css: "rgba(230,159,0,0.18)",
                ruler_css: "#1c2024",
                ink_css: "#e6e8ea",
                muted_css: "#9aa4ad",
                accent_css: "#56b4e9",
                ramp_start: 0.3,
            },
        }
    }

    /// Colour of a cell first reached at `layer` when the mask converges at `depth`.
    pub fn layer_colour(&self, layer: usize, depth: usize) -> Rgb {
        if layer == 0 {
            return self.self_cell;
        }
        let t = if depth <= 1 { 0.0 } else { (layer - 1) as f64 / (depth - 1) as f64 };
        viridis(self.ramp_start + (1.0 - self.ramp_start) * t)
    }
}

/// Viridis at `t` in `[0, 1]` (linear between stops).
pub fn viridis(t: f64) -> Rgb {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// `#rrggbb` of a colour.
pub fn css(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layer_ramp_runs_from_the_dark_end_and_the_diagonal_is_grey() {
        let p = Palette::of(Theme::Light);
        assert_eq!(p.layer_colour(0, 5), p.self_cell);
        assert_eq!(p.layer_colour(1, 5), VIRIDIS[0]);
        assert_eq!(p.layer_colour(5, 5), VIRIDIS[8]);
        assert_eq!(css(viridis(0.5)), "#26828e");
    }
}
