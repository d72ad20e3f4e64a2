//! Unit tests of the analysis.

use super::*;

#[test]
fn down_sets_up_sets_and_comparable_pairs() {
    // prefix-LM n=5 p=2: classes {0,1} {2} {3} {4}, a chain.
    let m = BitMatrix::from_fn(5, |q, k| k <= q || k < 2);
    let a = Analysis::new(&m);
    let c = a.class_of()[3];
    assert_eq!(a.down_set(c), [0, 1, 2, 3]);
    assert_eq!(a.seen_by(c), 2);
    assert_eq!(a.seen_by(a.class_of()[0]), 5);
    let (pairs, cut) = a.comparable_pairs(100);
    assert_eq!((pairs.len(), cut), (6, false));
    assert!(pairs.iter().all(|&(lo, up)| a.class_le(lo, up) && lo != up));
    assert_eq!(a.comparable_pairs(6), (pairs.clone(), false));
    assert_eq!(a.comparable_pairs(5), (pairs[..5].to_vec(), true));
}

#[test]
fn cycle_needs_n_minus_one_layers() {
    let n = 9;
    let cycle = BitMatrix::from_fn(n, |q, k| k == (q + n - 1) % n);
    let a = Analysis::new(&cycle);
    assert_eq!(a.depth(), n - 1);
    assert_eq!(a.classes().len(), 1);
    assert_eq!(a.width(), 1);
    assert_eq!(FirstReach::new(&cycle).depth(), n - 1);
}

#[test]
fn width_and_height() {
    let causal = BitMatrix::from_fn(50, |q, k| k <= q);
    let a = Analysis::new(&causal);
    assert_eq!((a.height(), a.width()), (50, 1));
    let empty = BitMatrix::zeros(7);
    let a = Analysis::new(&empty);
    assert_eq!((a.height(), a.width()), (1, 7));
    // Two chains of length 3 side by side.
    let two = BitMatrix::from_fn(6, |q, k| q / 3 == k / 3 && k <= q);
    let a = Analysis::new(&two);
    assert_eq!((a.height(), a.width()), (3, 2));
}

#[test]
fn empty_matrix() {
    let a = Analysis::new(&BitMatrix::zeros(0));
    assert_eq!(a.depth(), 0);
    assert!(a.classes().is_empty());
    assert_eq!(a.width(), 0);
}
