//! `hasseflow-bench`: prints a table of analysis timings and peak memory for the catalog masks at
//! several sizes, next to petgraph's pipeline (condensation + transitive reduction/closure) on the
//! same masks. A benchmark, not a test: it asserts only that both pipelines agree on the counts.
//!
//! Usage: `cargo run --release -p hasseflow-bench -- [--sizes 256,1024,4096] [--reps 3] [--only NAME]
//! [--petgraph-timeout SECONDS] [--derive] [--cpu-time]`
//!
//! `--derive` prints the derivation table instead: building each built-in family and running the
//! whole pipeline (per-task analyses, keys, merge, masks, checks) on autoregressive n=512, block
//! generation n=1024 s=16 and butterfly n=256 (target: at most 200 ms each).
//!
//! `--flow` prints the flow table instead: forward + n perturbed copies through all layers of the
//! random Transformer, CPU path vs GPU path, for n in 64,128,256 (or `--sizes`), d_model 64,
//! 4 heads, 8 layers (see `flow.rs`).
//!
//! `--models` prints the structured reach table instead: Mistral 7B at n = 131072, a
//! Gemma-3-27B-like stack at 131072 and Llama 4 Scout at 10,485,760 (all layers, exact), and the
//! same stacks at n = 8192 against the dense engine (see `models.rs`).
//!
//! `--mask-mod` prints the mask_mod evaluation table instead: interval-analysis rows against
//! cell-by-cell evaluation at n = 8192, and a 131072-token document mask from a lookup tensor on
//! the structured engine against its closed form (see `mask_mod.rs`).
//!
//! `--cpu-time` (before the mode) times every figure as the thread's time on a CPU instead of
//! wall-clock time: on a machine shared with other work, what the code costs.
//!
//! `--memory` prints the model runs' memory estimate (`hasseflow_core::reach::model_run_bytes`,
//! what `hasseflow model` and the app refuse by) against the peak heap measured here, for gallery
//! models at 1M and 16M positions, with documents and with sinks; it asserts the estimate is never
//! below the peak.

// The counting allocator and the thread CPU clock (`--cpu-time`) are the only unsafe code in the
// workspace; the allocator forwards to the system allocator and keeps two counters.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hasseflow_core::derive::{self, AutoregressiveOptions, BlockOptions, ButterflyOptions, Family};
use hasseflow_core::presets::build_preset;
use hasseflow_core::{Analysis, BitMatrix, FirstReach};
use petgraph::algo::tred::{dag_to_toposorted_adjacency_list, dag_transitive_reduction_closure};
use petgraph::graph::{DiGraph, NodeIndex};

mod flow;
mod mask_mod;
mod models;

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to `System` unchanged; only bookkeeping is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Set by `--cpu-time`: every timing is the thread's time on a CPU (`CLOCK_THREAD_CPUTIME_ID`)
/// instead of wall-clock time, so that on a machine shared with other work a figure is what the
/// code costs (user and kernel time, page faults included), not how long it waited for a core.
static CPU_TIME: AtomicBool = AtomicBool::new(false);

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

unsafe extern "C" {
    fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
}

/// Linux's `CLOCK_THREAD_CPUTIME_ID`.
const THREAD_CPU_CLOCK: i32 = 3;

/// The benchmark's clock: wall-clock time since the first call, or with `--cpu-time` the
/// thread's time on a CPU so far. Timings are differences of two readings.
pub(crate) fn clock() -> Duration {
    static START: OnceLock<Instant> = OnceLock::new();
    if CPU_TIME.load(Ordering::Relaxed) {
        let mut t = Timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid, writable timespec; the clock id is Linux's thread CPU clock.
        let rc = unsafe { clock_gettime(THREAD_CPU_CLOCK, &mut t) };
        assert_eq!(rc, 0, "--cpu-time needs the thread CPU clock (Linux)");
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    } else {
        START.get_or_init(Instant::now).elapsed()
    }
}

/// Runs `f` `reps` times; returns the best time, the peak extra heap of one run, and its result.
fn measure<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, usize, T) {
    let mut best = Duration::MAX;
    let mut peak = 0;
    let mut last = None;
    for _ in 0..reps.max(1) {
        drop(last.take());
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        let t = clock();
        let out = f();
        best = best.min(clock() - t);
        peak = peak.max(PEAK.load(Ordering::Relaxed) - base);
        last = Some(out);
    }
    (best, peak, last.expect("at least one run"))
}

fn preset(name: &str, n: usize, params: &[(&str, String)]) -> BitMatrix {
    let params: BTreeMap<String, String> = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    build_preset(name, n, &params, 1 << 14).expect("benchmark preset builds")
}

/// The benchmark masks at (about) `n` positions.
fn masks(n: usize) -> Vec<(String, BitMatrix)> {
    vec![
        ("causal".into(), preset("causal", n, &[])),
        ("window w=64".into(), preset("sliding-window", n, &[("w", "64".into())])),
        ("block-causal 64".into(), preset("block-causal", n, &[("s", "64".into())])),
        (format!("two-stream n={} s=64", n / 2), preset("block-two-stream", n / 2, &[("s", "64".into())])),
        (format!("butterfly n={}", n / 3), preset("butterfly", n / 3, &[])),
        (
            "bigbird b=64".into(),
            preset("bigbird", n, &[("b", "64".into()), ("r", "1".into()), ("g", "1".into()), ("random", "3".into())]),
        ),
        ("random p=8/n".into(), preset("random", n, &[("p", format!("{}", 8.0 / n as f64)), ("seed", "1".into())])),
    ]
}

/// petgraph's pipeline: graph from the mask, condensation, topological sort, transitive
/// reduction and closure of the class DAG. Returns (classes, reduction edges, closure edges).
fn petgraph_pipeline(m: &BitMatrix) -> (usize, usize, usize) {
    let n = m.n();
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n, m.count_ones());
    let nodes: Vec<NodeIndex> = (0..n).map(|_| g.add_node(())).collect();
    for q in 0..n {
        for k in m.row_ones(q) {
            if k != q {
                g.add_edge(nodes[k], nodes[q], ());
            }
        }
    }
    let dag = petgraph::algo::condensation(g, true);
    let topo = petgraph::algo::toposort(&dag, None).expect("condensation is acyclic");
    let (list, _) = dag_to_toposorted_adjacency_list::<_, u32>(&dag, &topo);
    let (tred, tclos) = dag_transitive_reduction_closure(&list);
    (dag.node_count(), tred.edge_count(), tclos.edge_count())
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

fn mib(bytes: usize) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

/// The derivation table: family build and full pipeline, best of `reps`.
fn derive_table(reps: usize) {
    println!(
        "| family | tasks | nodes before -> after | positions | L* dense / sparse | build ms | derive ms | total ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    type Builder = Box<dyn Fn() -> Family>;
    let cases: Vec<(&str, Builder)> = vec![
        (
            "autoregressive n=512",
            Box::new(|| derive::autoregressive(AutoregressiveOptions::new(512)).expect("family builds")),
        ),
        (
            "block generation n=1024 s=16",
            Box::new(|| derive::block_generation(BlockOptions::new(1024, 16)).expect("family builds")),
        ),
        ("butterfly n=256", Box::new(|| derive::butterfly(ButterflyOptions::new(256)).expect("family builds"))),
    ];
    for (name, build) in cases {
        let (t_build, _, family) = measure(reps, build);
        let (t_derive, _, d) = measure(reps, || derive::derive(&family).expect("derives"));
        let r = d.report();
        assert!(r.leaks.is_empty() && r.minimal && r.consistent && r.diagram_matches, "{name} is sound");
        println!(
            "| {name} | {} | {} -> {} (+{}) | {} | {} / {} | {} | {} | {} |",
            r.tasks,
            r.nodes_before,
            r.nodes_after,
            r.padding_nodes,
            r.positions,
            r.depth_dense,
            r.depth_sparse,
            ms(t_build),
            ms(t_derive),
            ms(t_build + t_derive)
        );
    }
}

fn main() {
    let mut sizes = vec![256usize, 1024, 4096];
    let mut derive_mode = false;
    let mut flow_mode = false;
    let mut models_mode = false;
    let mut memory_mode = false;
    let mut sizes_given = false;
    let mut reps = 3usize;
    let mut only: Option<String> = None;
    let mut timeout = Duration::from_secs(30);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--sizes" => {
                sizes_given = true;
                sizes =
                    it.next().map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect()).unwrap_or(sizes);
            }
            "--only" => only = it.next().cloned(),
            "--cpu-time" => CPU_TIME.store(true, Ordering::Relaxed),
            "--derive" => derive_mode = true,
            "--flow" => flow_mode = true,
            "--models" => models_mode = true,
            "--mask-mod" => {
                mask_mod::run();
                return;
            }
            "--memory" => memory_mode = true,
            "--reps" => reps = it.next().and_then(|s| s.parse().ok()).unwrap_or(reps),
            "--petgraph-timeout" => {
                timeout = it.next().and_then(|s| s.parse().ok()).map(Duration::from_secs_f64).unwrap_or(timeout)
            }
            "--petgraph-child" => {
                let n = it.next().and_then(|s| s.parse().ok()).expect("--petgraph-child N NAME");
                let name = it.next().expect("--petgraph-child N NAME");
                petgraph_child(n, name, reps);
                return;
            }
            other => {
                eprintln!(
                    "unknown argument {other}; usage: hasseflow-bench [--sizes 256,1024,4096] [--reps 3] [--only NAME] [--petgraph-timeout SECONDS] [--derive] [--flow] [--models] [--memory] [--mask-mod] [--cpu-time]"
                );
                std::process::exit(2);
            }
        }
    }
    if derive_mode {
        derive_table(reps);
        return;
    }
    if models_mode {
        models::models_table(reps, only.as_deref());
        return;
    }
    if memory_mode {
        models::memory_table(only.as_deref());
        return;
    }
    if flow_mode {
        let flow_sizes = if sizes_given { sizes } else { vec![64, 128, 256] };
        flow::flow_table(&flow_sizes, reps);
        return;
    }
    println!(
        "| N | mask | entries | L* | classes | Hasse | order ms | full analysis ms | analysis MiB | first-reach ms | first-reach MiB | width ms | petgraph ms | petgraph / order | petgraph / full |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &sizes {
        for (name, m) in masks(n) {
            if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
                continue;
            }
            // Order only: closure, classes, Hasse (what petgraph's pipeline computes, and more:
            // the position-level limit). Full: plus L* and the growth curve.
            let (t_order, _, _) = measure(reps, || Analysis::new(&m));
            let (t_an, mem_an, a) = measure(reps, || {
                let a = Analysis::new(&m);
                a.depth();
                a
            });
            let (t_fr, mem_fr, d) = measure(reps.min(2), || FirstReach::new(&m));
            assert_eq!(d.depth(), a.depth(), "first-reach and analysis agree on L*");
            let (t_w, _, _) = measure(1, || a.width());
            let pg = petgraph_in_child(n, &name, reps, timeout);
            let (pg_ms, ratio_order, ratio_full) = match pg {
                Some((ms_pg, classes, hasse)) => {
                    assert_eq!(
                        (classes, hasse),
                        (a.classes().len(), a.hasse_edges().len()),
                        "pipelines agree on {name}"
                    );
                    let secs = ms_pg / 1e3;
                    (
                        format!("{ms_pg:.2}"),
                        format!("{:.1}x", secs / t_order.as_secs_f64()),
                        format!("{:.1}x", secs / t_an.as_secs_f64()),
                    )
                }
                None => {
                    let t = format!("> {:.0}", timeout.as_secs_f64() * 1e3);
                    let lower = |d: Duration| format!("> {:.0}x", timeout.as_secs_f64() / d.as_secs_f64());
                    (t, lower(t_order), lower(t_an))
                }
            };
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                m.n(),
                name,
                m.count_ones(),
                a.depth(),
                a.classes().len(),
                a.hasse_edges().len(),
                ms(t_order),
                ms(t_an),
                mib(mem_an),
                ms(t_fr),
                mib(mem_fr),
                ms(t_w),
                pg_ms,
                ratio_order,
                ratio_full,
            );
        }
    }
}

/// Runs petgraph's pipeline on mask `name` of size `n` in a child process (this binary with
/// `--petgraph-child`), so that a run past `timeout` can be stopped without leaving a thread
/// busy. Returns (best ms, classes, Hasse edges), or `None` on time-out.
fn petgraph_in_child(n: usize, name: &str, reps: usize, timeout: Duration) -> Option<(f64, usize, usize)> {
    let exe = std::env::current_exe().expect("own path");
    let mut child = std::process::Command::new(exe)
        .args(["--reps", &reps.to_string()])
        .args(CPU_TIME.load(Ordering::Relaxed).then_some("--cpu-time"))
        .args(["--petgraph-child", &n.to_string(), name])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("child starts");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("child status") {
            assert!(status.success(), "petgraph child failed");
            let mut out = String::new();
            std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out).expect("read child");
            let v: Vec<f64> = out.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            return Some((v[0], v[1] as usize, v[2] as usize));
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The child side of [`petgraph_in_child`]: prints "ms classes hasse_edges".
fn petgraph_child(n: usize, name: &str, reps: usize) {
    let (_, m) = masks(n).into_iter().find(|(nm, _)| nm == name).expect("known mask name");
    let (t, _, (classes, hasse, _)) = measure(reps, || petgraph_pipeline(&m));
    println!("{} {classes} {hasse}", t.as_secs_f64() * 1e3);
}
