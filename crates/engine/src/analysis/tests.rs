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

/// The order keeps the closure as one row per class and builds the `n x n` matrix only when asked:
/// the class queries (`class_le`, `down_set`, `seen_by`) and the limit's cell count read those
/// rows, and must say what the limit by layers says (as must the matrix built from them), on
/// masks whose classes are relabelled (random sparse, windows both ways) or not (causal-like),
/// dense or not.
#[test]
fn the_class_queries_read_the_closure_from_the_class_rows() {
    let mut rng = crate::rng::SplitMix64::new(77);
    let mut interleaved = 0;
    for case in 0..120 {
        let m = if case % 2 == 0 { random_mask(&mut rng, case) } else { random_sparse_mask(&mut rng, case % 9) };
        let a = Analysis::new(&m);
        let n = m.n();
        // Queried before the matrix is built, then checked against it.
        let cells = a.limit_cells();
        let classes = a.classes().len();
        let down: Vec<Vec<usize>> = (0..classes).map(|c| a.down_set(c)).collect();
        let seen: Vec<usize> = (0..classes).map(|c| a.seen_by(c)).collect();
        let le: Vec<bool> = (0..classes * classes).map(|i| a.class_le(i % classes, i / classes)).collect();
        // The oracle: the limit by layers, `R(n)`.
        let r = &reach_after(&m, n);
        assert_eq!(a.closure(), r, "case {case}: the closure built from the class rows");
        assert_eq!(cells, r.count_ones(), "case {case}: cells of the limit");
        for c in 0..classes {
            let rep = a.classes()[c][0];
            assert_eq!(down[c], r.row_ones(rep).collect::<Vec<_>>(), "case {case}: down-set of {c}");
            assert_eq!(seen[c], (0..n).filter(|&q| r.get(q, rep)).count(), "case {case}: seen by {c}");
            for &q in &a.classes()[c] {
                assert_eq!(r.row(q), r.row(rep), "case {case}: {q} sees what its class sees");
            }
            for lower in 0..classes {
                let sees = r.get(rep, a.classes()[lower][0]);
                assert_eq!(le[c * classes + lower], sees, "case {case}: {lower} <= {c}");
            }
        }
        let topological = (1..n).all(|q| a.class_of()[q] >= a.class_of()[q - 1]);
        interleaved += usize::from(!topological && classes > 2);
    }
    assert!(interleaved > 20, "{interleaved} masks have classes out of position order");
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

/// Random masks of every shape the catalog has: windows and blocks (single-interval rows),
/// unions of a few random intervals, strided and random sparse rows (fragmented reach, where the
/// structured path hands over to the sweep), in both directions.
fn random_mask(rng: &mut crate::rng::SplitMix64, case: usize) -> BitMatrix {
    let n = 1 + rng.below(if case % 5 == 4 { 300 } else { 90 });
    let w = 1 + rng.below(n.min(12));
    let b = 1 + rng.below(n.min(16));
    let p = (1.0 + rng.below(4) as f64) / n as f64;
    match case % 5 {
        0 => BitMatrix::from_fn(n, |q, k| k <= q && q - k < w),
        1 => BitMatrix::from_fn(n, |q, k| k / b <= q / b && (q / b - k / b).is_multiple_of(2)),
        2 => {
            // A few random intervals per row, some rows empty.
            let mut m = BitMatrix::zeros(n);
            for q in 0..n {
                for _ in 0..rng.below(4) {
                    let a = rng.below(n);
                    let e = (a + rng.below(w + 1)).min(n - 1);
                    for k in a..=e {
                        m.set(q, k, true);
                    }
                }
            }
            m
        }
        3 => BitMatrix::from_fn(n, |q, k| q == k || (q + n - k) % n == w || k.is_multiple_of(b + 1) && k < q),
        _ => {
            let mut m = BitMatrix::zeros(n);
            for q in 0..n {
                for k in 0..n {
                    if rng.next_f64() < p {
                        m.set(q, k, true);
                    }
                }
            }
            m
        }
    }
}

/// The structured first-reach (intervals per row and per layer) against the dense bit sweep, and
/// both against `Ā^L` at every layer.
#[test]
fn structured_first_reach_matches_the_sweep_on_random_masks() {
    let mut rng = crate::rng::SplitMix64::new(31);
    for case in 0..400 {
        let m = random_mask(&mut rng, case);
        let fast = FirstReach::new(&m);
        let slow = FirstReach::by_sweep(&m);
        assert_eq!(fast, slow, "case {case}: n = {}", m.n());
        let a = Analysis::new(&m);
        assert_eq!((fast.depth(), fast.growth()), (a.depth(), a.growth().to_vec()), "case {case}");
        if case % 8 == 0 && m.n() <= 90 {
            for layer in 0..=fast.depth() + 1 {
                assert_eq!(fast.reach_at(layer), reach_after(&m, layer), "case {case}, layer {layer}");
            }
        }
    }
}

/// Layers past 254 (the matrix widens from one byte per cell to two): a window of 2 (single
/// intervals, the structured path) and a strided cycle (its reach rows fragment: the sweep).
#[test]
fn first_reach_past_255_layers() {
    let n = 400;
    let window = BitMatrix::from_fn(n, |q, k| k <= q && q - k < 2);
    let d = FirstReach::new(&window);
    assert_eq!((d.depth(), d.get(n - 1, 0), d.get(0, 1)), (n - 1, Some(n - 1), None));
    assert_eq!(d, FirstReach::by_sweep(&window));
    // q reads q - 7 (mod n): one cycle through every position (7 and 400 are coprime).
    let strided = BitMatrix::from_fn(n, |q, k| k == (q + n - 7) % n);
    let d = FirstReach::new(&strided);
    assert_eq!(d.depth(), n - 1);
    assert_eq!(d.get(7 * 300 % n, 0), Some(300));
    assert_eq!(d, FirstReach::by_sweep(&strided));
    assert_eq!(d.growth(), Analysis::new(&strided).growth());
}

/// Random sparse masks for the frontier BFS: `d` random keys per row on average (some rows
/// empty, some positions isolated), either over the whole mask (one big class) or inside
/// blocks with a few links from earlier blocks to later ones (several classes and a chain of
/// them), sometimes plus a short window; sizes around the 64-key words and the 1024-key batches.
fn random_sparse_mask(rng: &mut crate::rng::SplitMix64, case: usize) -> BitMatrix {
    let n = match case % 10 {
        0 | 4 => 1 + rng.below(70),
        1 | 5 => 60 + rng.below(80),
        // Past one batch of 1024 keys, and past two.
        9 => 900 + rng.below(1400),
        _ => 1 + rng.below(260),
    };
    let d = 0.5 + rng.below(12) as f64 / 2.0;
    let p = (d / n as f64).min(1.0);
    let blocks = 1 + rng.below(4);
    let block = n.div_ceil(blocks);
    let isolated = rng.below(3) == 0;
    let window = if rng.below(4) == 0 { 1 + rng.below(3) } else { 0 };
    let mut m = BitMatrix::zeros(n);
    for q in 0..n {
        if isolated && q % 7 == 3 {
            continue;
        }
        for k in 0..n {
            if isolated && k % 7 == 3 {
                continue;
            }
            let same = q / block == k / block;
            let link = k / block < q / block && rng.next_f64() < 0.3 / n as f64;
            if (same && rng.next_f64() < p * blocks as f64) || link || (k < q && q - k <= window) {
                m.set(q, k, true);
            }
        }
    }
    m
}

/// The frontier BFS (first-reach matrix, `L*`, growth, with and without the limit to stop rows)
/// against the layer sweep, and the order it is used with: its limit is `R(L*)` and its classes
/// are the positions that see each other.
#[test]
fn frontier_bfs_matches_the_sweep_on_random_sparse_masks() {
    let mut rng = crate::rng::SplitMix64::new(4096);
    let mut multi_class = 0;
    for case in 0..300 {
        let m = random_sparse_mask(&mut rng, case);
        let n = m.n();
        let slow = FirstReach::by_sweep(&m);
        assert_eq!(FirstReach::by_frontier(&m), slow, "case {case}: n = {n}");
        assert_eq!(FirstReach::new(&m), slow, "case {case}: n = {n}");
        let a = Analysis::new(&m);
        let adj = m.with_diagonal();
        let growth = slow.growth();
        let kernels = [frontier::Kernel::Widest, frontier::Kernel::Avx2, frontier::Kernel::Baseline];
        let directions = [
            frontier::Direction::Cheaper,
            frontier::Direction::Push,
            frontier::Direction::Pull,
            frontier::Direction::Mixed,
        ];
        for (i, (direction, kernel)) in directions.into_iter().flat_map(|d| kernels.map(|k| (d, k))).enumerate() {
            for limit in [None, Some(&frontier::Limit::new(&a))] {
                // The batches shared among 1 to 3 threads, each writing its own buffer.
                let threads = 1 + (i + usize::from(limit.is_some())) % 3;
                let (fast, added) = FirstReach::by_frontier_with(&adj, limit, direction, kernel, threads);
                let depth = fast.depth();
                let why =
                    format!("case {case}: {direction:?}, {kernel:?}, limit {}, {threads} threads", limit.is_some());
                assert_eq!((depth, sweep::running_sums(&added)), (slow.depth(), growth.clone()), "{why}");
                assert_eq!(fast, slow, "{why}");
            }
        }
        assert_eq!((a.depth(), a.growth()), (slow.depth(), &growth[..]), "case {case}: analysis");
        // The order of a sparse mask keeps its graph, not `Ā`: built on demand, it is `Ā`, and the
        // density (from the graph's counts) is `Ā = R`.
        assert_eq!(a.adj(), &adj, "case {case}: Ā");
        assert_eq!(a.is_dense(), adj == *a.closure(), "case {case}: dense");

        // The growth alone, its batches shared among 1 to 4 threads (n up to 2300: 3 batches).
        let graph = crate::sparse::Graph::of(&adj);
        let limit = frontier::Limit::new(&a);
        for (threads, limit, kernel) in [
            (1, None, frontier::Kernel::Widest),
            (2, Some(&limit), frontier::Kernel::Baseline),
            (3, None, frontier::Kernel::Avx2),
            (4, Some(&limit), frontier::Kernel::Widest),
        ] {
            let (depth, added) = frontier::frontier_growth_on(&graph, limit, threads, kernel);
            assert_eq!(
                (depth, sweep::running_sums(&added)),
                (slow.depth(), growth.clone()),
                "case {case}: {threads} threads, {kernel:?}"
            );
        }
        assert_eq!(a.closure(), &slow.reach_at(slow.depth()), "case {case}: limit");
        for q in 0..n {
            for k in 0..n {
                let mutual = slow.get(q, k).is_some() && slow.get(k, q).is_some();
                assert_eq!(a.class_of()[q] == a.class_of()[k], mutual, "case {case}: classes of {q}, {k}");
            }
        }
        multi_class += usize::from(a.classes().len() > 1 && a.classes().iter().any(|c| c.len() > 1));
    }
    assert!(multi_class > 50, "the corpus has several non-trivial classes in {multi_class} masks");
}

/// Working memory is kept between searches, and a batch that pulled leaves its blocks as they
/// are: a search that pushes first, on a mask of any size, after searches that pulled on larger
/// and smaller ones (the blocks of positions past the smaller `n` included), finds what the
/// sweep finds. Each search takes the spare the one before gave back (unless a test running
/// beside this one takes it first: then this one checks less, never wrongly).
#[test]
fn a_search_after_searches_that_pulled_finds_the_same_layers() {
    let mut rng = crate::rng::SplitMix64::new(77);
    let random = |rng: &mut crate::rng::SplitMix64, n: usize| {
        BitMatrix::from_fn(n, |q, k| q != k && rng.next_f64() < 6.0 / n as f64).with_diagonal()
    };
    let (large, small) = (random(&mut rng, 1500), random(&mut rng, 300));
    let (slow_large, slow_small) = (FirstReach::by_sweep(&large), FirstReach::by_sweep(&small));
    let kernel = frontier::Kernel::Widest;
    for round in 0..3 {
        for (mask, slow, direction) in [
            (&large, &slow_large, frontier::Direction::Pull),
            (&small, &slow_small, frontier::Direction::Push),
            (&large, &slow_large, frontier::Direction::Push),
            (&small, &slow_small, frontier::Direction::Pull),
            (&large, &slow_large, frontier::Direction::Push),
            (&small, &slow_small, frontier::Direction::Mixed),
            (&large, &slow_large, frontier::Direction::Cheaper),
        ] {
            let (fast, _) = FirstReach::by_frontier_with(mask, None, direction, kernel, 1 + round);
            assert_eq!(&fast, slow, "round {round}: n = {}, {direction:?}", mask.n());
        }
    }
}

/// The density of a sparse mask, read from its graph's counts (the order keeps no `Ā`): masks of
/// two levels, where the upper positions read random lower ones and the lower read none, are
/// their own limit (`L* = 1`); one link from a lower position that is read to another lower
/// one that its reader does not read makes the limit larger (`L* = 2`).
#[test]
fn the_density_of_a_sparse_mask_comes_from_its_graph() {
    let mut rng = crate::rng::SplitMix64::new(2);
    for (case, n) in [3, 9, 64, 65, 300, 1500].into_iter().enumerate() {
        let lower = n / 3;
        let mut m = BitMatrix::zeros(n);
        for q in lower..n {
            for _ in 0..4 {
                m.set(q, rng.below(lower), true);
            }
        }
        for linked in [false, true] {
            if linked {
                // An upper position reads 0 and not 1, and 0 now reads 1.
                m.set(lower, 0, true);
                m.set(lower, 1, false);
                m.set(0, 1, true);
            }
            let a = Analysis::new(&m);
            let adj = m.with_diagonal();
            assert!(a.sparse_graph().is_some(), "case {case}: the graph's path");
            assert_eq!(a.is_dense(), !linked, "case {case}, linked {linked}");
            assert_eq!(a.is_dense(), adj == *a.closure(), "case {case}, linked {linked}");
            let slow = FirstReach::by_sweep(&m);
            assert_eq!((a.depth(), a.growth()), (slow.depth(), &slow.growth()[..]), "case {case}, linked {linked}");
            assert_eq!(a.depth(), 1 + usize::from(linked), "case {case}, linked {linked}");
        }
    }
}

/// The frontier BFS's half-byte matrix: on scattered sparse masks of odd and even sizes whose
/// `L*` is below 15, at 15 and past it (levels of positions, each reading eight random positions
/// of the level before, so the depth is the number of levels), `FirstReach::new` equals the
/// sweep cell for cell, with the same growth, and widens to a byte when a layer reaches 15 (and
/// to two past 254). Natively the masks of over 1024 positions are searched in several batches,
/// shared among threads that widen their buffers and the matrix on their own.
#[test]
fn first_reach_in_half_bytes_widens_at_layer_fifteen() {
    let mut rng = crate::rng::SplitMix64::new(15);
    for (levels, width) in [(3, 61), (14, 41), (15, 40), (16, 39), (23, 37), (14, 90), (16, 70), (260, 5)] {
        let n = levels * width;
        let mut m = BitMatrix::from_fn(n, |_, _| false);
        for q in width..n {
            let level = q / width;
            for _ in 0..8 {
                m.set(q, (level - 1) * width + rng.below(width), true);
            }
        }
        let adj = m.with_diagonal();
        // 260 levels of 5 positions are not scattered: `new` takes another path, and the search
        // in half bytes is run below on its own.
        let scattered = crate::sparse::Graph::sparse(&adj).is_some_and(|g| g.scattered);
        assert_eq!(scattered, width > 5, "{levels} levels: the BFS's path");
        let (fast, slow) = (FirstReach::new(&m), FirstReach::by_sweep(&m));
        assert_eq!(fast.depth(), levels - 1, "{levels} levels");
        assert_eq!(fast, slow, "{levels} levels: every cell");
        assert_eq!(fast.growth(), slow.growth(), "{levels} levels: growth");
        assert_eq!(!fast.in_half_bytes(), levels > 15, "{levels} levels: half bytes while every layer is below 15");
        for threads in 1..=3 {
            assert_eq!(FirstReach::by_frontier_in_half_bytes(&m, threads), slow, "{levels} levels, {threads} threads");
        }
    }
}
