//! hasseflow-gpu: the core's flow model (`hasseflow_core::flow`) as WGSL compute kernels run
//! through wgpu, natively (Vulkan; lavapipe on machines without a GPU) and in the browser
//! (WebGPU). It returns the same [`FlowRaw`] as [`hasseflow_core::flow::cpu::run_flow`], which is
//! its test oracle and the fallback when no adapter exists.
//!
//! ```no_run
//! use hasseflow_core::BitMatrix;
//! use hasseflow_core::flow::{FlowConfig, FlowMasks, FlowModel, FlowReport};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let config = FlowConfig::default();
//! let mask = BitMatrix::from_fn(16, |q, k| k <= q);
//! let model = FlowModel::new(config, 16)?;
//! let masks = FlowMasks::uniform(&mask, &config);
//! let gpu = hasseflow_gpu::GpuFlow::new_blocking()?; // `GpuFlow::new().await` on the web
//! let raw = gpu.run_blocking(&model, &masks)?;
//! println!("{:?}", FlowReport::new(&raw, &masks).layers[0]);
//! # Ok(())
//! # }
//! ```
//!
//! All `n + 1` copies (the unperturbed pass and one per perturbed input) run as one batch of
//! rows through every kernel; only when the buffers would exceed the device's storage-binding
//! limit are the copies split into several batches, each with its own unperturbed copy 0.

use hasseflow_core::flow::{BackendInfo, FlowMasks, FlowModel, FlowRaw};
use wgpu::util::DeviceExt;

/// Total bytes of per-copy scratch buffers one batch may use.
const BATCH_BUDGET_BYTES: u64 = 1 << 30;
/// Invocations per workgroup in every kernel.
const WORKGROUP: u32 = 64;

/// Why the GPU path did not run.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter: no GPU, no Vulkan driver (install mesa-vulkan-drivers for lavapipe), or a
    /// browser without WebGPU.
    #[cfg_attr(
        not(target_arch = "wasm32"),
        error("no GPU adapter found ({0}); on Linux install mesa-vulkan-drivers for lavapipe")
    )]
    #[cfg_attr(target_arch = "wasm32", error("the browser offers no WebGPU adapter ({0})"))]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("cannot create a GPU device: {0}")]
    Device(String),
    /// A kernel or buffer failed validation, or the device was lost.
    #[error("GPU error: {0}")]
    Execution(String),
    /// Reading the results back failed.
    #[error("cannot read GPU results back: {0}")]
    Readback(String),
    /// The masks and the model do not fit together.
    #[error("masks ({masks} positions, {layers} layers) do not match the model ({n} positions, {model_layers} layers)")]
    Mismatch {
        /// Mask positions.
        masks: usize,
        /// Mask layers.
        layers: usize,
        /// Model positions.
        n: usize,
        /// Model layers.
        model_layers: usize,
    },
}

/// The adapter a [`GpuFlow`] runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// Adapter name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// GPU API, e.g. "vulkan" or "browser webgpu".
    pub api: String,
    /// Device type as wgpu reports it ("Cpu", "DiscreteGpu", ...).
    pub device_type: String,
    /// A software implementation (lavapipe, SwiftShader): `device_type` is `Cpu`.
    pub software: bool,
}

struct Pipelines {
    embed: wgpu::ComputePipeline,
    matmul: wgpu::ComputePipeline,
    layernorm: wgpu::ComputePipeline,
    attention: wgpu::ComputePipeline,
    record: wgpu::ComputePipeline,
    influence: wgpu::ComputePipeline,
}

/// A device with the flow kernels compiled, reusable across runs.
pub struct GpuFlow {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    pipelines: Pipelines,
    batch_limit: Option<usize>,
}

impl GpuFlow {
    /// Finds an adapter, opens a device with the adapter's limits and compiles the kernels.
    pub async fn new() -> Result<GpuFlow, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let summary = AdapterSummary {
            name: info.name.clone(),
            api: info.backend.to_string(),
            device_type: format!("{:?}", info.device_type),
            software: info.device_type == wgpu::DeviceType::Cpu,
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("hasseflow flow"),
                required_features: wgpu::Features::empty(),
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = |module: &wgpu::ShaderModule, entry: &str, label: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let embed = device.create_shader_module(wgpu::include_wgsl!("shaders/embed.wgsl"));
        let matmul = device.create_shader_module(wgpu::include_wgsl!("shaders/matmul.wgsl"));
        let layernorm = device.create_shader_module(wgpu::include_wgsl!("shaders/layernorm.wgsl"));
        let attention = device.create_shader_module(wgpu::include_wgsl!("shaders/attention.wgsl"));
        let influence = device.create_shader_module(wgpu::include_wgsl!("shaders/influence.wgsl"));
        let pipelines = Pipelines {
            embed: pipeline(&embed, "main", "embed"),
            matmul: pipeline(&matmul, "main", "matmul"),
            layernorm: pipeline(&layernorm, "main", "layernorm"),
            attention: pipeline(&attention, "main", "attention"),
            record: pipeline(&attention, "record", "attention record"),
            influence: pipeline(&influence, "main", "influence"),
        };
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Execution(format!("compiling the kernels: {e}")));
        }
        Ok(GpuFlow { device, queue, adapter: summary, pipelines, batch_limit: None })
    }

    /// Caps the copies per batch (at least 2: copy 0 and one perturbed input), to exercise the
    /// split path on small inputs or to bound memory.
    pub fn with_batch_limit(mut self, copies: usize) -> GpuFlow {
        self.batch_limit = Some(copies.max(2));
        self
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterSummary {
        &self.adapter
    }

    /// What [`FlowRaw::backend`] reports for this device.
    pub fn backend_info(&self) -> BackendInfo {
        BackendInfo {
            kind: "gpu".into(),
            adapter: Some(self.adapter.name.clone()),
            api: Some(self.adapter.api.clone()),
            software_adapter: self.adapter.software,
        }
    }

    /// Runs the flow computation: the unperturbed pass and `n` perturbed copies through every
    /// layer, the influence of every input on every position after every layer, and the
    /// head-averaged attention of the unperturbed pass.
    pub async fn run(&self, model: &FlowModel, masks: &FlowMasks) -> Result<FlowRaw, GpuError> {
        let cfg = *model.config();
        let n = model.n();
        if masks.n() != n || masks.layers() != cfg.layers {
            return Err(GpuError::Mismatch { masks: masks.n(), layers: masks.layers(), n, model_layers: cfg.layers });
        }
        let dev = &self.device;
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let d = cfg.d_model;
        let f = cfg.hidden();
        let layers = cfg.layers;
        let storage = wgpu::BufferUsages::STORAGE;
        let init = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage })
        };
        let weights = init("weights", &f32_bytes(model.weights()), storage);
        let mut inputs = model.inputs().to_vec();
        inputs.extend_from_slice(model.perturbation());
        let inputs = init("inputs", &f32_bytes(&inputs), storage);
        let words = n.div_ceil(32);
        let mask_words: Vec<u32> =
            masks.distinct().iter().flat_map(|m| (0..n).flat_map(move |q| row_u32(m.row(q), words))).collect();
        let mask_buf = init("masks", &u32_bytes(&mask_words), storage);

        // Copies per batch: the largest scratch buffer (qkv, 3d per row) must fit one binding.
        let limits = dev.limits();
        let row_bytes = (n * 3 * d * 4) as u64;
        let per_copy = (n * (d + 3 * d + d + f) * 4) as u64;
        let cap = (limits.max_storage_buffer_binding_size / row_bytes)
            .min(limits.max_buffer_size / row_bytes)
            .min(BATCH_BUDGET_BYTES / per_copy)
            .clamp(2, n as u64 + 1) as usize;
        let cap = self.batch_limit.map_or(cap, |b| b.min(cap));
        let scratch = |label: &str, floats: usize, extra: wgpu::BufferUsages| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (floats.max(1) * 4) as u64,
                usage: storage | extra,
                mapped_at_creation: false,
            })
        };
        let copy = wgpu::BufferUsages::COPY_SRC;
        let h = scratch("h", cap * n * d, copy);
        let qkv = scratch("qkv", cap * n * 3 * d, wgpu::BufferUsages::empty());
        let heads_out = scratch("heads", cap * n * d, wgpu::BufferUsages::empty());
        let hidden = scratch("hidden", cap * n * f, wgpu::BufferUsages::empty());
        let influence = scratch("influence", layers * n * n, copy);
        let attention = scratch("attention", layers * n * n, copy);
        let output = scratch("output", n * d, copy | wgpu::BufferUsages::COPY_DST);

        let mut start = 0;
        while start < n {
            let perturbed = (cap - 1).min(n - start);
            let copies = perturbed + 1;
            let rows = (copies * n) as u32;
            let mut encoder = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("flow batch") });
            {
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("flow"), timestamp_writes: None });
                let p = &self.pipelines;
                let (nu, du, fu) = (n as u32, d as u32, f as u32);
                let embed_params = [rows, nu, du, start as u32];
                self.dispatch(&mut pass, &p.embed, &embed_params, &[(1, &inputs), (2, &h)], rows * du);
                let o = model.offsets();
                for l in 0..layers {
                    let base = (l * o.stride) as u32;
                    let at = |off: usize| base + off as u32;
                    let mm = |pass: &mut wgpu::ComputePass<'_>, src, dst, din: u32, dout: u32, w, b, mode| {
                        let params = [rows, din, dout, at(w), at(b), mode, 0, 0];
                        let grid = (dout.div_ceil(64), rows.div_ceil(64));
                        self.dispatch_grid(pass, &p.matmul, &params, &[(1, src), (2, dst), (3, &weights)], grid);
                    };
                    mm(&mut pass, &h, &qkv, du, 3 * du, o.qkv, o.qkv_bias, 0);
                    let dh = cfg.head_dim() as u32;
                    let scale = 1.0 / (cfg.head_dim() as f32).sqrt();
                    let mut att = [0u32; 16];
                    att[..8].copy_from_slice(&[
                        rows,
                        nu,
                        du,
                        cfg.heads as u32,
                        dh,
                        words as u32,
                        (l * n * n) as u32,
                        scale.to_bits(),
                    ]);
                    for head in 0..cfg.heads {
                        att[8 + head] = (masks.mask_index(l, head) * n * words) as u32;
                    }
                    self.dispatch(
                        &mut pass,
                        &p.attention,
                        &att,
                        &[(1, &qkv), (2, &heads_out), (3, &mask_buf)],
                        rows * cfg.heads as u32,
                    );
                    if start == 0 {
                        let mut rec = att;
                        rec[0] = nu;
                        self.dispatch(&mut pass, &p.record, &rec, &[(1, &qkv), (3, &mask_buf), (4, &attention)], nu);
                    }
                    mm(&mut pass, &heads_out, &h, du, du, o.out, o.out_bias, 2);
                    let ln1 = [rows, du, at(o.ln1_gain), at(o.ln1_bias)];
                    self.dispatch(&mut pass, &p.layernorm, &ln1, &[(1, &h), (2, &weights)], rows);
                    mm(&mut pass, &h, &hidden, du, fu, o.mlp1, o.mlp1_bias, 1);
                    mm(&mut pass, &hidden, &h, fu, du, o.mlp2, o.mlp2_bias, 2);
                    let ln2 = [rows, du, at(o.ln2_gain), at(o.ln2_bias)];
                    self.dispatch(&mut pass, &p.layernorm, &ln2, &[(1, &h), (2, &weights)], rows);
                    let infl = [(perturbed * n) as u32, nu, du, start as u32, (l * n * n) as u32, 0, 0, 0];
                    self.dispatch(&mut pass, &p.influence, &infl, &[(1, &h), (2, &influence)], (perturbed * n) as u32);
                }
            }
            if start == 0 {
                encoder.copy_buffer_to_buffer(&h, 0, &output, 0, Some((n * d * 4) as u64));
            }
            self.queue.submit([encoder.finish()]);
            start += perturbed;
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Execution(e.to_string()));
        }
        let lnn = layers * n * n;
        let floats = self.read_back(&[(&influence, lnn), (&attention, lnn), (&output, n * d)]).await?;
        let (infl, rest) = floats.split_at(lnn);
        let (att, out) = rest.split_at(lnn);
        // The kernels write influence[layer][q][k] directly in the core's row-major layout.
        Ok(FlowRaw {
            n,
            backend: self.backend_info(),
            influence: infl.chunks_exact(n * n).map(<[f32]>::to_vec).collect(),
            attention: att.chunks_exact(n * n).map(<[f32]>::to_vec).collect(),
            output: out.to_vec(),
        })
    }

    /// Records one dispatch of `pipeline` over `threads` invocations of a 64-wide workgroup, spread
    /// over x and y so that no dimension exceeds 65535 workgroups.
    fn dispatch(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        params: &[u32],
        buffers: &[(u32, &wgpu::Buffer)],
        threads: u32,
    ) {
        let groups = threads.div_ceil(WORKGROUP).max(1);
        let x = groups.min(65535);
        self.dispatch_grid(pass, pipeline, params, buffers, (x, groups.div_ceil(x)));
    }

    /// Records one dispatch of `pipeline` with a fresh uniform buffer of `params` at binding 0 and
    /// `buffers` at their bindings, over a `(x, y)` grid of workgroups.
    fn dispatch_grid(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        params: &[u32],
        buffers: &[(u32, &wgpu::Buffer)],
        (x, y): (u32, u32),
    ) {
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: &u32_bytes(params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() }];
        for &(binding, b) in buffers {
            entries.push(wgpu::BindGroupEntry { binding, resource: b.as_entire_binding() });
        }
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Copies the given `(buffer, floats)` into one staging buffer, maps it and decodes it.
    async fn read_back(&self, parts: &[(&wgpu::Buffer, usize)]) -> Result<Vec<f32>, GpuError> {
        let total: usize = parts.iter().map(|(_, f)| f).sum();
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("staging"),
            size: (total.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        let mut at = 0u64;
        for (buf, floats) in parts {
            let bytes = (*floats * 4) as u64;
            encoder.copy_buffer_to_buffer(buf, 0, &staging, at, Some(bytes));
            at += bytes;
        }
        self.queue.submit([encoder.finish()]);
        let slice = staging.slice(..);
        let (tx, rx) = futures_channel::oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
        rx.await
            .map_err(|_| GpuError::Readback("the map callback was dropped".into()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let view = slice.get_mapped_range().map_err(|e| GpuError::Readback(e.to_string()))?;
        let out = view.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        drop(view);
        staging.unmap();
        Ok(out)
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl GpuFlow {
    /// [`GpuFlow::new`], blocking (native only).
    pub fn new_blocking() -> Result<GpuFlow, GpuError> {
        pollster::block_on(GpuFlow::new())
    }

    /// [`GpuFlow::run`], blocking (native only).
    pub fn run_blocking(&self, model: &FlowModel, masks: &FlowMasks) -> Result<FlowRaw, GpuError> {
        pollster::block_on(self.run(model, masks))
    }
}

/// Opens a device and runs the flow once.
pub async fn run_flow(model: &FlowModel, masks: &FlowMasks) -> Result<FlowRaw, GpuError> {
    GpuFlow::new().await?.run(model, masks).await
}

/// The GPU path when an adapter exists, otherwise the core's CPU path; the result's
/// [`FlowRaw::backend`] says which ran, and the error says why the GPU did not.
pub async fn run_flow_or_cpu(model: &FlowModel, masks: &FlowMasks) -> (FlowRaw, Option<GpuError>) {
    match run_flow(model, masks).await {
        Ok(raw) => (raw, None),
        Err(e) => (hasseflow_core::flow::cpu::run_flow(model, masks), Some(e)),
    }
}

/// One mask row (u64 words) as `words` u32 words, low half first.
fn row_u32(row: &[u64], words: usize) -> impl Iterator<Item = u32> + '_ {
    (0..words).map(move |i| (row[i / 2] >> (32 * (i % 2))) as u32)
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
