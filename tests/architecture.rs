//! Architecture invariants stated in ARCHITECTURE.md, checked (in the spirit of rust-analyzer's
//! tidy tests): the core crate stays free of UI, web, GPU, IO-framework and clock crates, and the
//! CLI stays a thin layer that does not reimplement analysis.

use std::path::Path;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
fn core_has_no_ui_web_gpu_or_io_dependencies() {
    // The core, its compute kernels (hasseflow-engine) and its mask_mod interpreter, all
    // re-exported by the core.
    for krate in ["core", "engine", "mask_mod"] {
        let manifest = read(&format!("crates/{krate}/Cargo.toml"));
        let deps = manifest.split("[dependencies]").nth(1).expect("a [dependencies] table");
        let deps = deps.split("\n[").next().unwrap_or(deps);
        no_banned_dependency(krate, deps);
        // The engine depends on nothing of the workspace: the core builds on it, not the other way.
        assert!(krate != "engine" || !deps.contains("hasseflow-"), "hasseflow-engine depends on no workspace crate");
        // The interpreter builds on the engine alone, so the core (and the app) can take it or not.
        let workspace: Vec<&str> = deps.lines().filter(|l| l.starts_with("hasseflow-")).collect();
        assert!(
            krate != "mask_mod" || workspace == ["hasseflow-engine.workspace = true"],
            "hasseflow-mask-mod depends on the engine alone: {workspace:?}"
        );
    }
}

fn no_banned_dependency(krate: &str, deps: &str) {
    for banned in [
        "yew",
        "web-sys",
        "js-sys",
        "wasm-bindgen",
        "wgpu",
        "layout-rs",
        "tokio",
        "clap",
        "chrono",
        "getrandom",
        "rand",
    ] {
        let found = deps.lines().any(|l| {
            l.trim_start().starts_with(&format!("{banned} "))
                || l.trim_start().starts_with(&format!("{banned}="))
                || l.trim_start().starts_with(&format!("{banned}."))
        });
        assert!(!found, "crates/{krate} must not depend on {banned}");
    }
}

#[test]
fn core_source_does_no_io_and_reads_no_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack =
        vec![root.join("crates/core/src"), root.join("crates/engine/src"), root.join("crates/mask_mod/src")];
    let mut files = 0;
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("core src readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&path).expect("source readable");
            if path.extension().is_some_and(|x| x == "py") {
                // The mask_mod library preludes: Python run by the core's interpreter, not Rust.
                assert!(text.starts_with("# "), "{} must start with a comment saying what it is for", path.display());
                continue;
            }
            for banned in ["std::fs", "std::net", "std::time", "Instant::now", "std::env", "println!", "std::process"] {
                assert!(!text.contains(banned), "{} uses {banned}: core does no IO and reads no clock", path.display());
            }
            assert!(text.starts_with("//!"), "{} must start with a //! line saying what it is for", path.display());
        }
    }
    assert!(files >= 30, "found the core and engine sources ({files})");
}

#[test]
fn only_the_format_module_knows_the_schema() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("crates readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("core/src/format.rs")
                && !path.components().any(|c| c.as_os_str() == "tests")
                && !path.to_string_lossy().ends_with("tests.rs")
            {
                let text = std::fs::read_to_string(&path).expect("source readable");
                assert!(
                    !text.contains("\"hasseflow-mask\""),
                    "{} spells the format tag: use core::format",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn render_crate_has_no_web_or_ui_dependencies() {
    let manifest = read("crates/render/Cargo.toml");
    let deps = manifest.split("[dependencies]").nth(1).expect("render has a [dependencies] table");
    let deps = deps.split("\n[").next().unwrap_or(deps);
    for banned in ["yew", "web-sys", "js-sys", "wasm-bindgen", "gloo"] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(banned)),
            "crates/render must not depend on {banned}: the CLI reuses it"
        );
    }
    let lib = read("crates/render/src/lib.rs");
    assert!(!lib.contains("std::time") && !lib.contains("Instant::now"), "render reads no clock");
}

/// The store's files: everything in `crates/state/src/`.
fn store_files() -> Vec<String> {
    let mut files = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/state/src");
    for entry in std::fs::read_dir(&dir).expect("src/state readable") {
        let path = entry.expect("dir entry").path();
        assert!(path.is_file(), "{}: the store has no nested folders", path.display());
        files.push(format!("crates/state/src/{}", path.file_name().expect("a name").to_string_lossy()));
    }
    assert!(files.len() >= 7, "found the store's modules");
    files
}

#[test]
fn the_app_store_is_plain_rust_and_components_compute_no_analysis() {
    for file in store_files() {
        let text = read(&file);
        for banned in ["use yew", "yew::", "web_sys", "wasm_bindgen", "js_sys"] {
            assert!(!text.contains(banned), "{file} mentions {banned}: the store must build and test natively");
        }
    }
    // The share-link codec is the core's (the app and the Python package write the same links),
    // so it is below the store by the dependency graph.
    assert!(read("crates/core/src/share.rs").contains("pub fn encode("), "the share codec lives in the core");
    assert!(!Path::new(env!("CARGO_MANIFEST_DIR")).join("src/share.rs").exists(), "one share codec, the core's");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    // src/ui and its submodule folders (src/ui/models/).
    let mut paths = Vec::new();
    let mut dirs = vec![dir];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("src/ui readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() { dirs.push(path) } else { paths.push(path) }
        }
    }
    // What the components may take from the core: types to draw, constants, the flow and reach
    // jobs their effects step (and the flow run's split across the Web Workers, `flow_task`, with
    // the backend the GPU worker reports), the writers of downloads. Anything else goes through
    // the store.
    const ALLOWED_CORE: [&str; 32] = [
        "BitMatrix",
        "BackendInfo",
        "GpuAdapter",
        "ReachStack",
        "flow::",
        "FlowMasks",
        "FlowConfig",
        "FlowRaw",
        "CompareJob",
        "FlowOutput",
        "LayerAgreement",
        "percent_of_share",
        "flow_task",
        "cpu",
        "format::",
        "Encoding",
        "write_json",
        "MAX_INPUT_BYTES",
        "interop::",
        "BlockStats",
        "ExportKind",
        "model::",
        "ModelRun",
        "self",
        "MAX_CONFIG_BYTES",
        "ScaledModel",
        "presets::",
        "reach::",
        "ModelJob",
        "job::",
        "Job",
        "Step",
    ];
    // The designer's form edits the built-in families' parameters by the core's table, and the
    // intro opens two of them (data, not analysis).
    const ALLOWED_MORE: [&str; 16] = [
        "BuiltinFamily",
        "FAMILIES",
        "FamilyEntry",
        "FamilyParam",
        "ParamSpec",
        "BlockOptions",
        "ButterflyOptions",
        "ReachOptions",
        "CATALOG",
        "ParamKind",
        "preset_spec",
        "ClassWiring",
        "CoverWiring",
        "SparsifyOptions",
        "Tile",
        "BackendKind",
    ];
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("source readable");
        for (at, _) in text.match_indices("hasseflow_core::") {
            let rest = &text[at + "hasseflow_core::".len()..];
            let end = rest.find(';').unwrap_or(rest.len());
            for name in rest[..end].split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
                let name = name.trim_matches(':');
                let name = name.rsplit("::").next().unwrap_or(name);
                if name.is_empty()
                    || name.starts_with(char::is_lowercase) && !name.contains('_') && name != "cpu" && name != "self"
                {
                    // Module names (flow, format, model, ...) are checked by the items under them.
                    continue;
                }
                assert!(
                    ALLOWED_CORE.contains(&name) || ALLOWED_MORE.contains(&name),
                    "{} uses hasseflow_core's {name}: not in the components' list (tests/architecture.rs); \
                     compute it in the store",
                    path.display()
                );
            }
        }
        // Reading the limit's raw closure is analysis: the store and the core's Analysis methods
        // (down_set, seen_by, comparable_pairs, class_le) answer what the components draw.
        assert!(
            !text.contains(".closure()"),
            "{} reads a closure matrix: use the core's Analysis methods",
            path.display()
        );
        for banned in ["Analysis::new", "FirstReach::new", "densify(", "sparsify(", "parse_mask_file"] {
            assert!(!text.contains(banned), "{} calls {banned}: analysis belongs to the reducer", path.display());
        }
        assert!(
            !text.contains("inner_html") && !text.contains("set_inner_html"),
            "{}: no injected markup",
            path.display()
        );
        assert!(text.starts_with("//!"), "{} must start with a //! line", path.display());
        // Flow runs are effects, like IO: one module starts them, and the store keys and keeps them.
        if path.file_name().is_some_and(|f| f != "flow.rs") {
            for banned in ["GpuFlow", "CpuFlowJob", "run_flow", "ReportBuilder"] {
                assert!(!text.contains(banned), "{} mentions {banned}: flow runs live in ui/flow.rs", path.display());
            }
        }
        // Model runs likewise: ui/models.rs steps the reach engine, nothing else in the shell does.
        if path.file_name().is_some_and(|f| f != "models.rs") {
            for banned in ["ReachJob", "ModelRun::compute"] {
                assert!(
                    !text.contains(banned),
                    "{} mentions {banned}: model runs live in ui/models.rs",
                    path.display()
                );
            }
        }
    }
    for file in store_files().iter().filter(|f| !f.ends_with("tests.rs")) {
        let text = read(file);
        for banned in ["ReachJob", "ModelRun::compute", ".run(&"] {
            assert!(!text.contains(banned), "{file} mentions {banned}: the store never runs the reach engine");
        }
        for banned in ["GpuFlow", "hasseflow_gpu", "CpuFlowJob", "run_flow("] {
            assert!(!text.contains(banned), "{file} mentions {banned}: the store never runs the flow model");
        }
    }
    let index = read("index.html");
    assert!(index.contains("Content-Security-Policy") && !index.contains("unsafe-inline"), "keep the CSP strict");
    assert!(!index.contains("<script>") && !index.contains("<style"), "no inline scripts or styles");
}

#[test]
fn gpu_kernels_live_in_wgsl_files_and_the_core_stays_gpu_free() {
    let lib = read("crates/gpu/src/lib.rs");
    assert!(lib.contains("include_wgsl!"), "the GPU crate loads its kernels from .wgsl files");
    assert!(!lib.contains("@compute"), "no WGSL inside Rust strings: put kernels in crates/gpu/src/shaders");
    let shaders = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/gpu/src/shaders");
    let count = std::fs::read_dir(&shaders)
        .expect("shaders dir readable")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "wgsl")))
        .count();
    assert!(count >= 5, "found the flow kernels");
    let core = read("crates/core/Cargo.toml");
    assert!(!core.contains("hasseflow-gpu"), "the core must not depend on the GPU crate");
}

/// The compute kernels' entry points, called from size-optimised code (the core's model runs,
/// the app's store and runners).
const KERNEL_ENTRY_POINTS: [(&str, &str); 30] = [
    ("crates/engine/src/reach/engine/job.rs", "pub fn new(stack"),
    ("crates/engine/src/reach/engine/job.rs", "fn checked_step(&mut self)"),
    ("crates/engine/src/reach/engine/job.rs", "fn step(&mut self) -> Step<Self::Output>"),
    ("crates/engine/src/flow/job.rs", "pub fn new(model: &'a FlowModel"),
    ("crates/engine/src/flow/job.rs", "pub fn compare(raw: FlowRaw"),
    ("crates/engine/src/flow/job.rs", "fn step(&mut self) -> Step<FlowOutput>"),
    ("crates/engine/src/reach/engine/limit.rs", "pub(crate) fn limit("),
    ("crates/engine/src/reach/engine/limit.rs", "pub(crate) fn all_rows("),
    ("crates/engine/src/reach/engine/limit.rs", "pub fn repeated_growth("),
    ("crates/engine/src/flow/cpu.rs", "pub fn run_flow("),
    ("crates/engine/src/flow/cpu.rs", "pub fn new(model: &FlowModel, masks"),
    ("crates/engine/src/flow/cpu.rs", "pub fn step_layers("),
    ("crates/engine/src/flow/cpu.rs", "pub fn step(&mut self, model"),
    ("crates/engine/src/order/mod.rs", "pub fn new(mask: &BitMatrix)"),
    ("crates/render/src/lib.rs", "pub fn layout(input"),
    ("crates/engine/src/flow/report.rs", "pub fn with_threshold(raw"),
    ("crates/engine/src/flow/report.rs", "pub fn rethreshold(&self, raw"),
    (
        "crates/engine/src/flow/report.rs",
        "pub fn new(raw: &FlowRaw, masks: &FlowMasks, threshold: f64) -> ReportBuilder",
    ),
    ("crates/engine/src/flow/report.rs", "pub fn step(&mut self, raw: &FlowRaw)"),
    ("crates/engine/src/flow/report.rs", "pub fn rollout(attention"),
    ("crates/engine/src/flow/mod.rs", "pub fn new(config: FlowConfig, n: usize)"),
    ("crates/engine/src/flow/mod.rs", "pub fn from_stack(stack"),
    ("crates/engine/src/flow/mod.rs", "pub fn reach(&self) -> Vec<BitMatrix>"),
    ("crates/engine/src/reach/mod.rs", "pub fn from_model(spec"),
    ("crates/engine/src/reach/mod.rs", "pub fn to_layer_stack(&self)"),
    ("crates/engine/src/reach/mod.rs", "pub fn all_reach_rows(&self)"),
    ("crates/engine/src/reach/mod.rs", "pub fn limit_rows(&self)"),
    ("crates/engine/src/reach/mod.rs", "pub fn run(&self, options"),
    ("crates/engine/src/bits.rs", "pub fn transpose(&self) -> BitMatrix"),
    ("crates/engine/src/bits.rs", "pub fn bool_product(&self, other"),
];

#[test]
fn the_release_wasm_keeps_the_kernels_at_full_speed() {
    // The release wasm is one fat-LTO program re-optimised at the linking crate's opt-level: the
    // linking crate is the one-line hasseflow-web at 3, everything else at z but the kernels (at 2)
    // and layout-rs (at s).
    let manifest = read("Cargo.toml");
    let profile = manifest.split("[profile.wasm-release]").nth(1).expect("a wasm-release profile");
    let profile = profile.split("\n[profile.bench]").next().unwrap_or(profile);
    for line in ["lto = \"fat\"", "opt-level = \"z\""] {
        assert!(profile.contains(line), "profile.wasm-release has {line}");
    }
    for (package, level) in [
        ("hasseflow-web", "3"),
        ("hasseflow-flow-worker", "3"),
        ("hasseflow-engine", "2"),
        ("hasseflow-render", "\"z\""),
        ("layout-rs", "\"s\""),
    ] {
        let table = format!("[profile.wasm-release.package.{package}]\nopt-level = {level}");
        assert!(profile.contains(&table), "{package} is at opt-level {level} in profile.wasm-release");
    }
    let html = read("index.html");
    assert!(html.contains(r#"href="crates/web/Cargo.toml" data-bin="hasseflow-app""#), "trunk builds hasseflow-web");
    assert!(
        html.contains(r#"href="crates/lazy/Cargo.toml" data-type="worker" data-bindgen-target="web" data-cargo-profile-release="wasm-release""#),
        "trunk builds the lazily loaded hasseflow-lazy, as the app, with the release profile"
    );
    assert!(
        html.contains(r#"href="crates/formats/Cargo.toml" data-type="worker" data-bindgen-target="web" data-cargo-profile-release="wasm-release""#),
        "trunk builds the lazily loaded hasseflow-formats, as the app, with the release profile"
    );
    assert!(
        html.contains(r#"href="crates/designer/Cargo.toml" data-type="worker" data-bindgen-target="web" data-cargo-profile-release="wasm-release""#),
        "trunk builds the lazily loaded hasseflow-designer, as the app, with the release profile"
    );
    assert!(
        html.contains(r#"href="crates/flow_worker/Cargo.toml" data-type="worker" data-bindgen-target="web" data-cargo-profile-release="wasm-release""#),
        "trunk builds the Flow view's worker module, hasseflow-flow-worker, with the release profile"
    );
    assert!(
        read("Trunk.toml").contains(r#"command_arguments = ["scripts/hash_lazy.sh"]"#),
        "the lazy module is hashed"
    );
    // A kernel inlined into a size-optimised caller is compiled as size-optimised code (Mistral
    // at 1M ran ~35% slower), so their entry points are never inlined.
    for (file, signature) in KERNEL_ENTRY_POINTS {
        let text = read(file);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| l.contains(signature));
        let at = at.unwrap_or_else(|| panic!("{file} has no `{signature}`"));
        assert!(
            at > 0 && lines[at - 1].trim_start().starts_with("#[inline(never)]"),
            "{file}: `{signature}` is #[inline(never)] (a kernel entry point)"
        );
    }
}

/// The first download links no mask_mod interpreter, no codecs, no config reader and no Designer
/// pipeline: the packages the app's wasm is built from take the core without its `interpreter`,
/// `codecs`, `model-reader` and `derivation` features
/// (in their dependencies; the state's tests may have them), and the workspace's dependency on
/// the core turns its defaults off.
#[test]
fn the_app_links_no_mask_mod_interpreter_and_no_config_reader() {
    assert!(
        read("Cargo.toml").contains(r#"hasseflow-core = { path = "crates/core", default-features = false }"#),
        "the workspace's and the app's dependency on the core leave its defaults (the interpreter) out"
    );
    for manifest in [
        "Cargo.toml",
        "crates/web/Cargo.toml",
        "crates/state/Cargo.toml",
        "crates/render/Cargo.toml",
        "crates/gpu/Cargo.toml",
    ] {
        let text = read(manifest);
        let deps = text.split("[dev-dependencies]").next().unwrap_or(&text);
        let deps = deps.split("[workspace]").next().unwrap_or(deps);
        for line in deps.lines().filter(|l| l.trim_start().starts_with("hasseflow-core")) {
            assert!(
                line.contains("default-features = false") || line.contains("workspace = true"),
                "{manifest}: `{line}` takes the core's defaults (the interpreter) into the app"
            );
            assert!(!line.contains("interpreter"), "{manifest}: `{line}` links the interpreter into the app");
            assert!(!line.contains("model-reader"), "{manifest}: `{line}` links the config reader into the app");
            assert!(!line.contains("codecs"), "{manifest}: `{line}` links the codecs into the app");
            assert!(!line.contains("derivation"), "{manifest}: `{line}` links the Designer's pipeline into the app");
        }
    }
    for lazy in ["crates/lazy/Cargo.toml", "crates/formats/Cargo.toml", "crates/designer/Cargo.toml"] {
        // One feature set for all, so that a dev build compiles the core once for them.
        let all = r#"features = ["interpreter", "codecs", "model-reader", "derivation"]"#;
        assert!(read(lazy).contains(all), "{lazy} has all four");
    }
}

#[test]
fn the_release_bundle_is_built_by_release_sh_with_the_target_flags() {
    // RUSTFLAGS replaces .cargo/config.toml's target rustflags, so release.sh must repeat each
    // (SIMD for the kernels) beside its own: the standard library compiled with the app (at the
    // profile's `z`, optimize_for_size) and abort on panic.
    let config = read(".cargo/config.toml");
    let target_flags = config
        .lines()
        .find(|l| l.starts_with("rustflags"))
        .and_then(|l| l.split_once('['))
        .map(|(_, v)| {
            v.trim_end_matches(']').split(',').map(|f| f.trim().trim_matches('"').to_string()).collect::<Vec<_>>()
        })
        .expect("a rustflags line for the wasm target in .cargo/config.toml");
    let script = read("scripts/release.sh");
    let rustflags = script
        .lines()
        .find_map(|l| l.strip_prefix("export RUSTFLAGS="))
        .expect("release.sh exports RUSTFLAGS")
        .trim_matches('"')
        .to_string();
    let flags: Vec<&str> = rustflags.split_whitespace().collect();
    for pair in target_flags.chunks(2) {
        assert!(flags.windows(2).any(|w| w == pair), "release.sh's RUSTFLAGS keep {pair:?} of .cargo/config.toml");
    }
    assert!(rustflags.contains("panic=immediate-abort"), "release.sh's RUSTFLAGS abort on panic");
    for line in [
        "export RUSTC_BOOTSTRAP=1",
        "export CARGO_UNSTABLE_BUILD_STD=std,panic_abort",
        "export CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size",
        "exec trunk build --release --locked",
    ] {
        assert!(script.contains(line), "release.sh has `{line}`");
    }
    // wasm-opt's extra passes (measured in docs/BENCHMARKS.md): offsets folded into loads, large
    // single-caller functions kept out of line (inlining them made the wasm compress worse), and
    // the toolchain's custom sections (producers, target features; no browser reads them) dropped.
    // The same for every module: the app and the three fetched later.
    let html = read("index.html");
    let modules: Vec<&str> = html.split("data-trunk rel=\"rust\"").skip(1).collect();
    assert_eq!(modules.len(), 5, "index.html builds the app and four more modules");
    for module in modules {
        let params = module
            .split("data-wasm-opt-params=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .expect("each module passes wasm-opt params");
        for pass in [
            "--low-memory-unused",
            "--one-caller-inline-max-function-size",
            "--strip-producers",
            "--strip-target-features",
        ] {
            assert!(params.contains(pass), "wasm-opt params {params} lack {pass}");
        }
    }
    // The README's release command, and the tests of what it builds.
    assert!(read("README.md").contains("./scripts/release.sh"), "the README names scripts/release.sh");
    let tests = read("scripts/test.sh");
    assert!(tests.contains("scripts/release.sh --dist dist-release"), "test.sh builds the release bundle");
    assert!(tests.contains("HASSEFLOW_DIST=dist-release"), "test.sh runs e2e tests against it");
    assert!(tests.contains("release.test.mjs"), "test.sh runs release.test.mjs (the size target)");
}

mod arch;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Each crate's module tree, by its root file.
const CRATE_ROOTS: [&str; 9] = [
    "crates/core/src/lib.rs",
    "crates/engine/src/lib.rs",
    "crates/mask_mod/src/mod.rs",
    "crates/render/src/lib.rs",
    "crates/gpu/src/lib.rs",
    "crates/cli/src/main.rs",
    "crates/py/src/lib.rs",
    "crates/state/src/lib.rs",
    "src/lib.rs",
];

/// A crate's modules less its unit-test modules (`tests`), whose imports are not the crate's
/// structure.
fn crate_modules(root_file: &str) -> Vec<arch::Module> {
    let mods = arch::modules(&root().join(root_file));
    mods.into_iter().filter(|m| m.path.last().is_none_or(|last| !last.ends_with("tests"))).collect()
}

/// Modules form a tree whose siblings depend one way: no `a` that names something in its sibling
/// `b` while `b` (or a sibling `b` depends on) names something in `a`.
#[test]
fn no_module_cycles_in_any_crate() {
    let mut cycles = Vec::new();
    let mut modules = 0;
    for krate in CRATE_ROOTS {
        let mods = crate_modules(krate);
        modules += mods.len();
        cycles.extend(arch::sibling_cycles(&mods));
    }
    assert!(modules > 100, "only {modules} modules found: is the module walker broken?");
    let cycles: Vec<String> = cycles.iter().map(|c| c.replace(&format!("{}/", root().display()), "")).collect();
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

/// A made-up module for the checks' own tests.
fn module(path: &[&str], text: &str) -> arch::Module {
    arch::Module { path: path.iter().map(|s| s.to_string()).collect(), file: path.join("/"), text: text.to_string() }
}

#[test]
fn the_cycle_check_sees_a_cycle_and_passes_a_layering() {
    let cyclic = [
        module(&[], "mod a; mod b;"),
        module(&["a"], "use super::b::{X, c::Y};\nfn f() { crate::b::g(); }"),
        module(&["b"], "// use super::a::Z; (a comment)\n"),
        module(&["b", "c"], "pub struct Y; fn h() -> super::super::a::Z { todo!() }"),
    ];
    let found = arch::sibling_cycles(&cyclic);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("crate: a -> b -> a"), "{found:?}");
    // The same modules without b::c's reference: a layering, a over b.
    let layered =
        [module(&[], "mod a; mod b;"), module(&["a"], "use super::b::X;"), module(&["b"], "let s = \"super::a\";")];
    assert!(arch::sibling_cycles(&layered).is_empty());
}

/// Most lines any function of the app may span (components, painters, reducers), from `fn` to
/// its closing brace: a bigger one is split into named parts.
const MAX_FUNCTION_LINES: usize = 200;

#[test]
fn no_function_in_the_app_is_over_two_hundred_lines() {
    let mut long = Vec::new();
    let mut mods = arch::modules(&root().join("src/lib.rs"));
    mods.extend(arch::modules(&root().join("crates/state/src/lib.rs")));
    let mut functions = 0;
    for m in &mods {
        functions += arch::long_functions(&m.text, 0).len();
        for (name, line, lines) in arch::long_functions(&m.text, MAX_FUNCTION_LINES) {
            long.push(format!("{}:{line} `{name}` is {lines} lines", m.file));
        }
    }
    assert!(functions > 300, "only {functions} functions found in the app: is the scanner broken?");
    assert!(long.is_empty(), "split these (at most {MAX_FUNCTION_LINES} lines):\n{}", long.join("\n"));
}

#[test]
fn the_function_length_check_counts_from_fn_to_its_brace() {
    let text = "fn short() {\n    let s = \"}\";\n}\n\n#[function_component(A)]\npub fn a() -> Html {\n    html! { <p>{ \"{\" }</p> }\n\n\n}\nfn decl();\n";
    assert_eq!(arch::long_functions(text, 0), vec![("short".to_string(), 1, 3), ("a".to_string(), 6, 5)]);
    assert_eq!(arch::long_functions(text, 4), vec![("a".to_string(), 6, 5)]);
    assert!(arch::long_functions(text, 5).is_empty());
}

/// The store's reducers match every action they receive by name: a wildcard arm that does
/// nothing would let a new action compile unrouted.
#[test]
fn no_reducer_drops_actions_in_a_wildcard() {
    let store = arch::modules(&root().join("crates/state/src/lib.rs"));
    assert!(store.len() > 5, "the store's modules (crates/state/src) not found");
    let wild: Vec<String> = store.iter().flat_map(|m| arch::ignoring_wildcards(&m.file, &m.text)).collect();
    assert!(wild.is_empty(), "wildcard arms that drop what they do not name:\n{}", wild.join("\n"));
}

#[test]
fn the_wildcard_check_sees_an_empty_wildcard_arm() {
    let text = "match a {\n    A::X => f(),\n    _ => {}\n}\nmatch b { _ =>  ( ) }\n// _ => {}\nmatch c { _ => g() }";
    assert_eq!(arch::ignoring_wildcards("r.rs", text), ["r.rs:3", "r.rs:5"]);
}

/// No module of the app's UI names an item of its own parent or ancestors (the shared store is
/// a sibling module, `ui::store`, not the parent's).
#[test]
fn nothing_in_the_app_imports_upward() {
    let mods = crate_modules("src/lib.rs");
    assert!(mods.iter().any(|m| m.path == ["ui"]), "the UI's modules not found");
    let up: Vec<String> = arch::upward_imports(&mods).into_iter().filter(|u| u.contains("src/ui")).collect();
    assert!(up.is_empty(), "upward imports:\n{}", up.join("\n"));
}

#[test]
fn the_upward_check_sees_a_child_naming_its_parents_item() {
    let mods = [
        module(&[], "mod ui;"),
        module(&["ui"], "mod files; mod store; pub struct Store;"),
        module(&["ui", "files"], "use super::Store;\nuse super::store::Shared;\nuse crate::ui::Store as S;"),
        module(&["ui", "store"], "pub struct Shared;"),
    ];
    assert_eq!(arch::upward_imports(&mods), ["ui/files names super::Store", "ui/files names crate::ui::Store"]);
    // A unit-test module's `use super::*` is not an import of the module's structure.
    let with_tests = [
        module(&[], "mod ui;"),
        module(&["ui"], "pub struct Store;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::Store;\n}\n"),
    ];
    assert!(arch::sibling_cycles(&with_tests).is_empty() && arch::upward_imports(&with_tests).is_empty());
}
