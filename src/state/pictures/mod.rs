//! Pure pictures of the editor's two views, as Flow's [`super::LayerPicture`] and Models'
//! [`super::HeatPicture`] are: what the mask grid ([`grid`]) and the order view ([`order`]) show,
//! with every coordinate computed here, natively tested. The UI's painters only turn a picture
//! into canvas calls or SVG nodes, and pick the theme's colour for each kind of mark.

pub mod gesture;
pub mod grid;
pub mod order;

/// An axis-aligned rectangle in CSS pixels (top-left corner, width, height).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// The rectangle at `(x, y)` of size `w x h`.
    pub const fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }
}

/// A straight line segment in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// Start.
    pub from: (f64, f64),
    /// End.
    pub to: (f64, f64),
}
