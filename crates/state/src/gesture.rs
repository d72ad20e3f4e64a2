//! The grid's pointer gestures as a plain state machine: painting with one pointer, panning
//! with the middle button or Shift/Alt, pinch-zooming with two fingers (which abandons the first
//! finger's stroke). The UI feeds it pointer events in grid coordinates and carries out each
//! [`Reaction`]; nothing here knows the browser.

use super::grid_picture::GridView;

/// A pointer event in the grid's own coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pointer {
    /// The pointer's id.
    pub id: i32,
    /// A finger on a touch screen.
    pub touch: bool,
    /// The button pressed (0 main, 1 middle).
    pub button: i16,
    /// Shift or Alt held (the main button then pans).
    pub pan_key: bool,
    /// Where, in CSS pixels of the canvas.
    pub at: (f64, f64),
}

/// A step of the stroke being painted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrokeStep {
    /// Pointer down on a cell.
    Start((usize, usize)),
    /// Dragged onto another cell.
    Move((usize, usize)),
    /// Released.
    End,
    /// Abandoned (a second finger came down to pinch).
    Cancel,
}

/// What the UI does after an event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reaction {
    /// Keep the browser from its default handling (scrolling, text selection).
    pub prevent_default: bool,
    /// The new zoom and pan.
    pub view: Option<GridView>,
    /// The new hovered cell.
    pub hover: Option<Option<(usize, usize)>>,
    /// The stroke's step.
    pub stroke: Option<StrokeStep>,
}

/// The gesture under way.
#[derive(Clone, Debug, Default)]
pub struct Gesture {
    painting: bool,
    panning: Option<(f64, f64, GridView)>,
    last: Option<(usize, usize)>,
    /// Touch points down on the grid: pointer id and position.
    touches: Vec<(i32, f64, f64)>,
    /// A two-finger pinch: the fingers' distance and midpoint when it began, and the view then.
    pinch: Option<(f64, (f64, f64), GridView)>,
}

impl Gesture {
    /// Distance and midpoint of the first two touch points.
    fn spread(&self) -> Option<(f64, (f64, f64))> {
        let [(_, x0, y0), (_, x1, y1), ..] = self.touches[..] else { return None };
        Some(((x1 - x0).hypot(y1 - y0).max(1.0), ((x0 + x1) / 2.0, (y0 + y1) / 2.0)))
    }

    /// A pointer went down on an `n x n` grid seen through `view`.
    pub fn down(&mut self, p: Pointer, view: GridView, n: usize) -> Reaction {
        let (x, y) = p.at;
        let mut r = Reaction::default();
        if p.touch {
            self.touches.retain(|t| t.0 != p.id);
            self.touches.push((p.id, x, y));
            if let Some(spread) = self.spread() {
                // A second finger: pinch-zoom, and the first finger's stroke never happened.
                r.prevent_default = true;
                if self.painting {
                    self.painting = false;
                    self.last = None;
                    r.stroke = Some(StrokeStep::Cancel);
                }
                self.pinch = Some((spread.0, spread.1, view));
                return r;
            }
        }
        if p.button == 1 || (p.button == 0 && p.pan_key) {
            r.prevent_default = true;
            self.panning = Some((x, y, view));
        } else if p.button == 0
            && let Some(c) = view.cell_at(n, x, y)
        {
            r.prevent_default = true;
            self.painting = true;
            self.last = Some(c);
            r.stroke = Some(StrokeStep::Start(c));
        }
        r
    }

    /// A pointer moved; `hover` is the cell hovered until now.
    pub fn moved(&mut self, p: Pointer, view: GridView, n: usize, hover: Option<(usize, usize)>) -> Reaction {
        let (x, y) = p.at;
        let mut r = Reaction::default();
        if let Some(t) = self.touches.iter_mut().find(|t| t.0 == p.id) {
            (t.1, t.2) = (x, y);
        }
        if let Some((d0, mid0, v0)) = self.pinch {
            r.view = self.spread().map(|now| GridView::pinched(v0, (d0, mid0), now, n));
            return r;
        }
        if let Some((x0, y0, v0)) = self.panning {
            r.view = Some(v0.panned((x - x0, y - y0), n));
            return r;
        }
        let c = view.cell_at(n, x, y);
        if c != hover {
            r.hover = Some(c);
        }
        if self.painting
            && let Some(c) = c
            && self.last != Some(c)
        {
            self.last = Some(c);
            r.stroke = Some(StrokeStep::Move(c));
        }
        r
    }

    /// A pointer went up (or the browser cancelled it).
    pub fn up(&mut self, id: i32) -> Reaction {
        self.touches.retain(|t| t.0 != id);
        if self.pinch.is_some() {
            // The pinch ends when a finger lifts; the other finger does not start painting.
            if self.touches.is_empty() {
                self.pinch = None;
            }
            return Reaction::default();
        }
        self.panning = None;
        if self.painting {
            self.painting = false;
            self.last = None;
            return Reaction { stroke: Some(StrokeStep::End), ..Reaction::default() };
        }
        Reaction::default()
    }
}

/// What a key does on the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyStep {
    /// An arrow moved the cursor (the hovered cell) here.
    Hover((usize, usize)),
    /// Space or Enter paints this cell, as a one-cell stroke.
    Paint((usize, usize)),
}

/// What `key` does on an `n x n` grid whose cursor is at `hover` (the top-left cell when none);
/// `None` for a key the grid leaves alone.
pub fn grid_key(key: &str, hover: Option<(usize, usize)>, n: usize) -> Option<KeyStep> {
    let (q, k) = hover.unwrap_or((0, 0));
    let last = n.saturating_sub(1);
    Some(match key {
        "ArrowUp" => KeyStep::Hover((q.saturating_sub(1), k)),
        "ArrowDown" => KeyStep::Hover(((q + 1).min(last), k)),
        "ArrowLeft" => KeyStep::Hover((q, k.saturating_sub(1))),
        "ArrowRight" => KeyStep::Hover((q, (k + 1).min(last))),
        " " | "Enter" => KeyStep::Paint((q, k)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::super::grid_picture::RULER;
    use super::*;

    const N: usize = 49; // 10 px cells at zoom 1

    fn mouse(at: (f64, f64)) -> Pointer {
        Pointer { id: 1, touch: false, button: 0, pan_key: false, at }
    }

    fn finger(id: i32, at: (f64, f64)) -> Pointer {
        Pointer { id, touch: true, button: 0, pan_key: false, at }
    }

    #[test]
    fn arrows_move_the_cursor_within_the_grid_and_space_paints() {
        assert_eq!(grid_key("ArrowDown", None, 4), Some(KeyStep::Hover((1, 0))));
        assert_eq!(grid_key("ArrowUp", None, 4), Some(KeyStep::Hover((0, 0))), "stays on the grid");
        assert_eq!(grid_key("ArrowRight", Some((2, 3)), 4), Some(KeyStep::Hover((2, 3))));
        assert_eq!(grid_key("ArrowLeft", Some((2, 3)), 4), Some(KeyStep::Hover((2, 2))));
        assert_eq!(grid_key(" ", Some((2, 3)), 4), Some(KeyStep::Paint((2, 3))));
        assert_eq!(grid_key("Enter", None, 4), Some(KeyStep::Paint((0, 0))));
        assert_eq!(grid_key("a", Some((2, 3)), 4), None);
    }

    #[test]
    fn a_drag_paints_each_new_cell_once_and_ends_on_release() {
        let (mut g, v) = (Gesture::default(), GridView::HOME);
        let r = g.down(mouse((RULER + 5.0, RULER + 5.0)), v, N);
        assert_eq!((r.prevent_default, r.stroke), (true, Some(StrokeStep::Start((0, 0)))));
        let r = g.moved(mouse((RULER + 7.0, RULER + 5.0)), v, N, Some((0, 0)));
        assert_eq!(r, Reaction::default(), "the same cell: nothing");
        let r = g.moved(mouse((RULER + 15.0, RULER + 5.0)), v, N, Some((0, 0)));
        assert_eq!((r.hover, r.stroke), (Some(Some((0, 1))), Some(StrokeStep::Move((0, 1)))));
        assert_eq!(g.up(1).stroke, Some(StrokeStep::End));
        assert_eq!(g.up(1), Reaction::default(), "nothing left to end");
        let r = g.down(mouse((RULER - 5.0, RULER + 5.0)), v, N);
        assert_eq!(r, Reaction::default(), "the ruler is not a cell");
    }

    #[test]
    fn shift_drag_pans_and_paints_nothing() {
        let (mut g, v) = (Gesture::default(), GridView::HOME.zoomed(4.0, N));
        let r = g.down(Pointer { pan_key: true, ..mouse((200.0, 200.0)) }, v, N);
        assert!(r.prevent_default && r.stroke.is_none());
        let r = g.moved(mouse((190.0, 230.0)), v, N, None);
        assert_eq!(r.view, Some(v.panned((-10.0, 30.0), N)));
        assert!(r.hover.is_none() && r.stroke.is_none());
        assert_eq!(g.up(1), Reaction::default());
    }

    #[test]
    fn a_second_finger_cancels_the_stroke_and_pinches() {
        let (mut g, v) = (Gesture::default(), GridView::HOME);
        assert!(matches!(g.down(finger(1, (100.0, 100.0)), v, N).stroke, Some(StrokeStep::Start(_))));
        let r = g.down(finger(2, (140.0, 100.0)), v, N);
        assert_eq!((r.prevent_default, r.stroke), (true, Some(StrokeStep::Cancel)));
        // The fingers spread to twice their distance about the same midpoint.
        let r = g.moved(finger(2, (180.0, 100.0)), v, N, None);
        let r2 = g.moved(finger(1, (60.0, 100.0)), v, N, None);
        assert!(r.view.is_some_and(|z| z.zoom > 1.0));
        assert_eq!(r2.view.map(|z| z.zoom), Some(3.0));
        assert_eq!(g.up(1), Reaction::default());
        let r = g.moved(finger(2, (150.0, 120.0)), v, N, None);
        assert_eq!(r.view, None, "one finger left: the pinch waits for it to lift, and never paints");
        assert_eq!(g.up(2), Reaction::default());
        assert!(matches!(g.down(finger(3, (100.0, 100.0)), v, N).stroke, Some(StrokeStep::Start(_))));
    }
}
