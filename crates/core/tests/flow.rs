//! The flow model's CPU path against the theory: influence support equals `R(L)` on catalog masks,
//! weights are deterministic, fully masked rows stay finite, stacks and bad configs.

#[path = "support/flow_masks.rs"]
mod flow_masks;
#[path = "support/job_contract.rs"]
mod job_contract;

use flow_masks::{assert_exact, catalog_masks, preset};
use hasseflow_core::flow::{CompareJob, FlowConfig, FlowError, FlowJob, FlowMasks, FlowModel, FlowReport, cpu};
use hasseflow_core::{BitMatrix, Layer, LayerStack};

fn report(mask: &BitMatrix, config: FlowConfig) -> FlowReport {
    let model = FlowModel::new(config, mask.n()).expect("valid config");
    let masks = FlowMasks::uniform(mask, &config);
    FlowReport::new(&cpu::run_flow(&model, &masks), &masks)
}

#[test]
fn influence_support_equals_reach_on_catalog_masks() {
    let config = FlowConfig { d_model: 32, heads: 4, layers: 6, seed: 1 };
    // The shared catalog, plus a cycle (one class, L* = n - 1) on the CPU path.
    let cycle = ("cycle".to_string(), preset("cycle", 12, &[]));
    for (name, mask) in catalog_masks().into_iter().chain([cycle]) {
        let r = report(&mask, config);
        assert_exact(&name, &r);
        assert_eq!(r.layers.len(), 6);
    }
}

#[test]
fn long_window_chain_stays_above_the_threshold() {
    // Window w=2 over 16 layers: the weakest signal travels 16 hops.
    let mask = preset("sliding-window", 24, &[("w", "2")]);
    let r = report(&mask, FlowConfig { d_model: 16, heads: 1, layers: 16, seed: 9 });
    assert_exact("window w=2, 16 layers", &r);
}

#[test]
fn weights_are_deterministic_and_seeded() {
    let c = FlowConfig::default();
    let a = FlowModel::new(c, 16).expect("valid");
    assert_eq!(a, FlowModel::new(c, 16).expect("valid"));
    assert_ne!(a.weights(), FlowModel::new(FlowConfig { seed: 1, ..c }, 16).expect("valid").weights());
    // Weights do not depend on n.
    assert_eq!(a.weights(), FlowModel::new(c, 40).expect("valid").weights());
    // A fixed fingerprint (FNV-1a over the f32 bit patterns): the stream must never change
    // silently, and wasm must produce these same bits (only IEEE basic arithmetic is used).
    let fnv = |v: &[f32]| {
        v.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ u64::from(x.to_bits())).wrapping_mul(0x100_0000_01b3))
    };
    assert_eq!(a.weights().len(), 4 * a.offsets().stride);
    assert_eq!(a.weights()[0].to_bits(), 0x3f89_d011);
    assert_eq!(fnv(a.weights()), 0x3091_617a_69e3_2c5e);
    assert_eq!(fnv(a.inputs()), 0xb5a4_3bb0_71f3_bcf7);
    assert_eq!(fnv(a.perturbation()), 0xbfae_27af_015d_dd6e);
}

#[test]
fn fully_masked_rows_stay_finite_and_carry_only_the_residual() {
    // Rows 0 and 5 are empty; the identity and the empty mask are the extreme cases.
    let mut mask = preset("causal", 8, &[]);
    for k in 0..8 {
        mask.set(0, k, false);
        mask.set(5, k, false);
    }
    for m in [mask, BitMatrix::zeros(6), BitMatrix::identity(5)] {
        let config = FlowConfig { layers: 3, ..FlowConfig::default() };
        let model = FlowModel::new(config, m.n()).expect("valid");
        let masks = FlowMasks::uniform(&m, &config);
        let raw = cpu::run_flow(&model, &masks);
        assert!(raw.output.iter().all(|x| x.is_finite()), "output has NaN/inf");
        assert!(raw.influence.iter().flatten().all(|x| x.is_finite()));
        assert!(raw.attention.iter().flatten().all(|x| x.is_finite()));
        assert_exact("masked rows", &FlowReport::new(&raw, &masks));
    }
}

#[test]
fn per_layer_stack_follows_the_product_of_layers() {
    let causal = BitMatrix::from_fn(10, |q, k| k <= q);
    let anti = causal.transpose();
    let stack =
        LayerStack::new(vec![Layer::single(causal.clone()), Layer { heads: vec![anti, causal] }]).expect("valid stack");
    let config = FlowConfig { d_model: 16, heads: 2, layers: 3, seed: 4 };
    let masks = FlowMasks::from_stack(&stack, &config).expect("fits");
    let model = FlowModel::new(config, 10).expect("valid");
    let r = FlowReport::new(&cpu::run_flow(&model, &masks), &masks);
    assert_exact("stack", &r);
    assert_eq!(r.layers[0].reach, 55);
    assert_eq!(r.layers[1].reach, 100);
    let too_many = FlowConfig { heads: 1, ..config };
    assert!(matches!(FlowMasks::from_stack(&stack, &too_many), Err(FlowError::TooManyHeadMasks { .. })));
}

#[test]
fn bad_configs_are_typed_errors() {
    let ok = FlowConfig::default();
    assert_eq!(FlowModel::new(FlowConfig { d_model: 8, ..ok }, 4).err(), Some(FlowError::DModel(8)));
    assert_eq!(FlowModel::new(FlowConfig { heads: 9, ..ok }, 4).err(), Some(FlowError::Heads(9)));
    assert!(matches!(FlowModel::new(FlowConfig { heads: 3, ..ok }, 4), Err(FlowError::HeadSplit { .. })));
    assert_eq!(FlowModel::new(FlowConfig { layers: 0, ..ok }, 4).err(), Some(FlowError::Layers(0)));
    assert_eq!(FlowModel::new(FlowConfig { layers: 17, ..ok }, 4).err(), Some(FlowError::Layers(17)));
    assert_eq!(FlowModel::new(ok, 513).err(), Some(FlowError::Positions(513)));
    assert_eq!(FlowModel::new(ok, 0).err(), Some(FlowError::Positions(0)));
}

#[test]
fn stepped_job_equals_the_one_shot_run_whatever_the_step() {
    let config = FlowConfig { d_model: 16, heads: 2, layers: 3, seed: 4 };
    let mask = preset("sliding-window", 11, &[("w", "3")]);
    let model = FlowModel::new(config, 11).expect("valid");
    let masks = FlowMasks::uniform(&mask, &config);
    let whole = cpu::run_flow(&model, &masks);
    for step in [1, 3, 5, 11, 100] {
        let mut job = cpu::CpuFlowJob::new(&model, &masks);
        assert_eq!(job.progress(), 0.0, "nothing runs before the first step");
        let mut last = 0.0;
        let mut calls = 0;
        loop {
            calls += 1;
            let done = job.step(&model, &masks, step);
            assert!(job.progress() > last, "progress grows");
            last = job.progress();
            if done {
                break;
            }
        }
        assert_eq!(calls, 11usize.div_ceil(step), "step {step}: the first call also runs the unperturbed pass");
        assert_eq!(job.progress(), 1.0);
        assert_eq!(job.finish(), whole, "step {step}");
    }
    // Layer by layer, in uneven strides: the same result.
    for stride in [1, 2, 7] {
        let mut job = cpu::CpuFlowJob::new(&model, &masks);
        let mut calls = 0;
        while !job.step_layers(&model, &masks, stride) {
            calls += 1;
        }
        assert_eq!(calls + 1, (3 * 12usize).div_ceil(stride), "3 layers x (11 copies + 1)");
        assert_eq!(job.finish(), whole, "stride {stride}");
    }
}

/// The flow job (the CPU measurement, then the comparison) keeps the job contract, counts one
/// step per layer of each pass and per compared layer, and gives `run_flow` and
/// `FlowReport::with_threshold`; the comparison alone (the GPU's path) gives the same report.
#[test]
fn the_flow_job_gives_the_one_shot_run_and_report() {
    let config = FlowConfig { d_model: 16, heads: 2, layers: 3, seed: 5 };
    let mask = preset("sliding-window", 9, &[("w", "2")]);
    let model = FlowModel::new(config, 9).expect("valid");
    let masks = FlowMasks::uniform(&mask, &config);
    let raw = cpu::run_flow(&model, &masks);
    let report = FlowReport::with_threshold(&raw, &masks, 1e-6);
    let (out, seen) = job_contract::drive(FlowJob::new(&model, &masks, 1e-6), "flow job");
    let total = 3 * (9 + 1) + 3;
    assert_eq!(seen, (1..total).map(|d| (d, total)).collect::<Vec<_>>(), "one layer step each, the last hands over");
    assert_eq!(out.raw, raw);
    assert_eq!(out.report, report);
    let (out, seen) = job_contract::drive(FlowJob::compare(raw.clone(), &masks, 1e-6), "comparison");
    assert_eq!(seen, [(1, 3), (2, 3)]);
    assert_eq!((&out.raw, &out.report), (&raw, &report));
    // The comparison alone (what the web app steps after its workers measured) is the same job.
    let (out, seen) = job_contract::drive(CompareJob::new(raw.clone(), &masks, 1e-6), "comparison alone");
    assert_eq!(seen, [(1, 3), (2, 3)]);
    assert_eq!((out.raw, out.report), (raw, report));
    // The job knows when the measurement is complete.
    let mut job = FlowJob::new(&model, &masks, 1e-6);
    for _ in 0..3 * 10 - 1 {
        let _ = hasseflow_core::job::Job::step(&mut job);
        assert!(!job.measured());
    }
    let _ = hasseflow_core::job::Job::step(&mut job);
    assert!(job.measured(), "after 3 layers x 10 passes");
}

#[test]
fn a_higher_threshold_misses_faint_paths_but_never_invents_one() {
    // Window w=2 over 8 layers: the far end of the chain is faint.
    let config = FlowConfig { d_model: 16, heads: 1, layers: 8, seed: 3 };
    let mask = preset("sliding-window", 16, &[("w", "2")]);
    let model = FlowModel::new(config, 16).expect("valid");
    let masks = FlowMasks::uniform(&mask, &config);
    let raw = cpu::run_flow(&model, &masks);
    let exact = FlowReport::new(&raw, &masks);
    assert_exact("default threshold", &exact);
    let strict = FlowReport::with_threshold(&raw, &masks, 1e-2);
    assert_eq!(strict.threshold, 1e-2);
    let last = &strict.layers[7];
    assert!(last.false_negatives > 0, "8 hops at w=2 fall below 1e-2: {last:?}");
    assert!(strict.layers.iter().all(|l| l.false_positives == 0), "outside R(L) the change is exactly 0");
    assert!(last.agreement < 1.0);
    // Rethresholding reuses the rollout and gives the same report as computing afresh.
    assert_eq!(exact.rethreshold(&raw, &masks, 1e-2), strict);
    assert_eq!(strict.rethreshold(&raw, &masks, hasseflow_core::flow::INFLUENCE_THRESHOLD), exact);
}

#[test]
fn the_report_builder_gives_the_report_layer_by_layer() {
    let config = FlowConfig { d_model: 16, heads: 2, layers: 4, seed: 8 };
    let mask = preset("dilated-window", 14, &[("w", "3"), ("d", "2")]);
    let model = FlowModel::new(config, 14).expect("valid");
    let masks = FlowMasks::uniform(&mask, &config);
    let raw = cpu::run_flow(&model, &masks);
    let mut b = hasseflow_core::flow::ReportBuilder::new(&raw, &masks, 1e-6);
    let mut steps = 1;
    while !b.step(&raw) {
        steps += 1;
    }
    assert_eq!(steps, 4);
    let built = b.finish();
    assert_eq!(built, FlowReport::with_threshold(&raw, &masks, 1e-6));
    // The rollout agreement matches the stand-alone rollout's support.
    let rollouts = hasseflow_core::flow::rollout(&raw.attention, 14);
    for (l, (layer, roll)) in built.layers.iter().zip(&rollouts).enumerate() {
        let r = &masks.reach()[l];
        let ok = (0..196).filter(|&i| (roll[i] > 0.0) == r.get(i / 14, i % 14)).count();
        assert_eq!(layer.rollout_agreement, ok as f64 / 196.0);
    }
}
