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

use hasseflow_core::flow::{BackendInfo, BackendKind, FlowMasks, FlowModel, FlowRaw};
use wgpu::util::DeviceExt;

mod params;

use params::{AttentionParams, EmbedParams, InfluenceParams, LayerNormParams, MAX_PARAMS, MatmulMode, MatmulParams};

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

/// One compute pipeline with its explicit bind group layout: binding 0 is the kernel's uniform
/// parameters (a slot of the run's uniform buffer, chosen by a dynamic offset), bindings
/// `1..` its storage buffers.
struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    /// Size of the kernel's parameter struct (the uniform binding's size).
    params: u64,
}

struct Kernels {
    embed: Kernel,
    matmul: Kernel,
    layernorm: Kernel,
    attention: Kernel,
    record: Kernel,
    influence: Kernel,
}

/// A device with the flow kernels compiled, reusable across runs.
pub struct GpuFlow {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: AdapterSummary,
    kernels: Kernels,
    batch_limit: Option<usize>,
}

impl GpuFlow {
    /// Finds an adapter, opens a device with the adapter's limits and compiles the kernels.
    pub async fn new() -> Result<GpuFlow, GpuError> {
        // Natively the environment may choose the backends and flags (`WGPU_BACKEND`, ...). A
        // browser has no environment: reading it there changes nothing, and its parsing cost the
        // Flow view's worker module Unicode's case tables (docs/BENCHMARKS.md, stop 49).
        #[cfg(not(target_arch = "wasm32"))]
        let descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        #[cfg(target_arch = "wasm32")]
        let descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
        let instance = wgpu::Instance::new(descriptor);
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("hasseflow flow"),
                required_features: wgpu::Features::empty(),
                required_limits: adapter.limits(),
                ..Default::default()
            })
            .await
            .map_err(|e| GpuError::Device(e.to_string()))?;
        GpuFlow::from_device(device, queue, &adapter.get_info()).await
    }

    /// Compiles the kernels on a device the caller opened (a test harness, or an application
    /// that shares its device); `info` is its adapter's, for [`GpuFlow::adapter`]. Buffers are
    /// sized by the device's limits, whatever they are.
    pub async fn from_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: &wgpu::AdapterInfo,
    ) -> Result<GpuFlow, GpuError> {
        let adapter = AdapterSummary {
            name: info.name.clone(),
            api: info.backend.to_string(),
            device_type: format!("{:?}", info.device_type),
            software: info.device_type == wgpu::DeviceType::Cpu,
        };
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let embed = device.create_shader_module(wgpu::include_wgsl!("shaders/embed.wgsl"));
        let matmul = device.create_shader_module(wgpu::include_wgsl!("shaders/matmul.wgsl"));
        let layernorm = device.create_shader_module(wgpu::include_wgsl!("shaders/layernorm.wgsl"));
        let attention = device.create_shader_module(wgpu::include_wgsl!("shaders/attention.wgsl"));
        let influence = device.create_shader_module(wgpu::include_wgsl!("shaders/influence.wgsl"));
        // Storage bindings 1.. of each kernel: `true` for read-only.
        let kernel = |module: &wgpu::ShaderModule, entry: &str, label: &str, params: usize, storage: &[bool]| {
            kernel(&device, module, entry, label, params as u64, storage)
        };
        let kernels = Kernels {
            embed: kernel(&embed, "main", "embed", size_of::<EmbedParams>(), &[true, false]),
            matmul: kernel(&matmul, "main", "matmul", size_of::<MatmulParams>(), &[true, false, true]),
            layernorm: kernel(&layernorm, "main", "layernorm", size_of::<LayerNormParams>(), &[false, true]),
            attention: kernel(
                &attention,
                "main",
                "attention",
                size_of::<AttentionParams>(),
                &[true, false, true, false],
            ),
            record: kernel(
                &attention,
                "record",
                "attention record",
                size_of::<AttentionParams>(),
                &[true, false, true, false],
            ),
            influence: kernel(&influence, "main", "influence", size_of::<InfluenceParams>(), &[true, false]),
        };
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Execution(format!("compiling the kernels: {e}")));
        }
        Ok(GpuFlow { device, queue, adapter, kernels, batch_limit: None })
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
            kind: BackendKind::Gpu,
            adapter: Some(self.adapter.name.clone()),
            api: Some(self.adapter.api.clone()),
            software_adapter: self.adapter.software,
        }
    }

    /// Runs the flow computation: the unperturbed pass and `n` perturbed copies through every
    /// layer, the influence of every input on every position after every layer, and the
    /// head-averaged attention of the unperturbed pass.
    ///
    /// Every dispatch of a batch reads its parameters from its own slot of one uniform buffer,
    /// written once per batch; each kernel has one bind group per run (per buffer combination),
    /// and the slot is chosen by a dynamic offset.
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
        let weights = init("weights", bytemuck::cast_slice(model.weights()), storage);
        let mut inputs = model.inputs().to_vec();
        inputs.extend_from_slice(model.perturbation());
        let inputs = init("inputs", bytemuck::cast_slice(&inputs), storage);
        let words = n.div_ceil(32);
        let mask_words: Vec<u32> =
            masks.distinct().iter().flat_map(|m| (0..n).flat_map(move |q| row_u32(m.row(q), words))).collect();
        let mask_buf = init("masks", bytemuck::cast_slice(&mask_words), storage);

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

        // One parameter slot per dispatch of a batch: embed, then per layer 4 matmuls,
        // attention, record, 2 layernorms and influence.
        let mut slots = Slots::new(limits.min_uniform_buffer_offset_alignment, 1 + layers * 9);
        let uniform = dev.create_buffer(&wgpu::BufferDescriptor {
            label: Some("params"),
            size: slots.capacity_bytes(),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let k = &self.kernels;
        let group = |kernel: &Kernel, buffers: &[&wgpu::Buffer]| bind_group(dev, kernel, &uniform, buffers);
        let embed_group = group(&k.embed, &[&inputs, &h]);
        let qkv_group = group(&k.matmul, &[&h, &qkv, &weights]);
        let out_group = group(&k.matmul, &[&heads_out, &h, &weights]);
        let mlp1_group = group(&k.matmul, &[&h, &hidden, &weights]);
        let mlp2_group = group(&k.matmul, &[&hidden, &h, &weights]);
        let attention_group = group(&k.attention, &[&qkv, &heads_out, &mask_buf, &attention]);
        let record_group = group(&k.record, &[&qkv, &heads_out, &mask_buf, &attention]);
        let layernorm_group = group(&k.layernorm, &[&h, &weights]);
        let influence_group = group(&k.influence, &[&h, &influence]);

        let mut start = 0;
        while start < n {
            let perturbed = (cap - 1).min(n - start);
            let copies = perturbed + 1;
            let rows = (copies * n) as u32;
            slots.clear();
            let mut encoder = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("flow batch") });
            {
                let mut pass = encoder
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("flow"), timestamp_writes: None });
                let (nu, du, fu) = (n as u32, d as u32, f as u32);
                let embed = EmbedParams { rows, n: nu, d: du, first: start as u32 };
                dispatch(&mut pass, &k.embed, &embed_group, slots.push(&embed), rows * du);
                let o = model.offsets();
                for l in 0..layers {
                    let base = (l * o.stride) as u32;
                    let at = |off: usize| base + off as u32;
                    let mm = |slots: &mut Slots,
                              pass: &mut wgpu::ComputePass<'_>,
                              group,
                              din: u32,
                              dout: u32,
                              w,
                              b,
                              mode| {
                        let params =
                            MatmulParams { rows, din, dout, w: at(w), b: at(b), mode: mode as u32, _pad: [0; 2] };
                        let grid = (dout.div_ceil(64), rows.div_ceil(64));
                        dispatch_grid(pass, &k.matmul, group, slots.push(&params), grid);
                    };
                    mm(&mut slots, &mut pass, &qkv_group, du, 3 * du, o.qkv, o.qkv_bias, MatmulMode::Write);
                    let mut att = AttentionParams {
                        rows,
                        n: nu,
                        d: du,
                        heads: cfg.heads as u32,
                        dh: cfg.head_dim() as u32,
                        words: words as u32,
                        probs: (l * n * n) as u32,
                        scale: 1.0 / (cfg.head_dim() as f32).sqrt(),
                        mask_offset: [0; 8],
                    };
                    for head in 0..cfg.heads {
                        att.mask_offset[head] = (masks.mask_index(l, head) * n * words) as u32;
                    }
                    dispatch(&mut pass, &k.attention, &attention_group, slots.push(&att), rows * cfg.heads as u32);
                    if start == 0 {
                        let rec = AttentionParams { rows: nu, ..att };
                        dispatch(&mut pass, &k.record, &record_group, slots.push(&rec), nu);
                    }
                    mm(&mut slots, &mut pass, &out_group, du, du, o.out, o.out_bias, MatmulMode::ResidualAdd);
                    let ln1 = LayerNormParams { rows, d: du, gain: at(o.ln1_gain), bias: at(o.ln1_bias) };
                    dispatch(&mut pass, &k.layernorm, &layernorm_group, slots.push(&ln1), rows);
                    mm(&mut slots, &mut pass, &mlp1_group, du, fu, o.mlp1, o.mlp1_bias, MatmulMode::Gelu);
                    mm(&mut slots, &mut pass, &mlp2_group, fu, du, o.mlp2, o.mlp2_bias, MatmulMode::ResidualAdd);
                    let ln2 = LayerNormParams { rows, d: du, gain: at(o.ln2_gain), bias: at(o.ln2_bias) };
                    dispatch(&mut pass, &k.layernorm, &layernorm_group, slots.push(&ln2), rows);
                    let infl = InfluenceParams {
                        rows: (perturbed * n) as u32,
                        n: nu,
                        d: du,
                        first: start as u32,
                        layer: (l * n * n) as u32,
                        _pad: [0; 3],
                    };
                    dispatch(&mut pass, &k.influence, &influence_group, slots.push(&infl), (perturbed * n) as u32);
                }
            }
            if start == 0 {
                encoder.copy_buffer_to_buffer(&h, 0, &output, 0, Some((n * d * 4) as u64));
            }
            // The write lands before this submission's commands and after the previous batch's.
            self.queue.write_buffer(&uniform, 0, slots.bytes());
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
        // A copy, not a cast in place: the mapped range promises no `f32` alignment.
        let out = bytemuck::pod_collect_to_vec::<u8, f32>(&view[..total * 4]);
        drop(view);
        staging.unmap();
        Ok(out)
    }
}

/// Compiles `entry` of `module` with an explicit layout: binding 0 the parameters (uniform,
/// `params` bytes, dynamic offset), then one storage buffer per entry of `storage` (`true` =
/// read-only) at bindings 1, 2, ...
fn kernel(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    entry: &str,
    label: &str,
    params: u64,
    storage: &[bool],
) -> Kernel {
    let buffer =
        |binding: u32, ty: wgpu::BufferBindingType, dynamic: bool, min: Option<u64>| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: dynamic,
                min_binding_size: min.and_then(wgpu::BufferSize::new),
            },
            count: None,
        };
    let mut entries = vec![buffer(0, wgpu::BufferBindingType::Uniform, true, Some(params))];
    for (i, &read_only) in storage.iter().enumerate() {
        entries.push(buffer(i as u32 + 1, wgpu::BufferBindingType::Storage { read_only }, false, None));
    }
    let layout =
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(label), entries: &entries });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    Kernel { pipeline, layout, params }
}

/// The bind group of `kernel` over `buffers` (bindings 1, 2, ...), its parameters at binding 0
/// being a `kernel.params`-byte window of `uniform` placed by the dynamic offset.
fn bind_group(
    device: &wgpu::Device,
    kernel: &Kernel,
    uniform: &wgpu::Buffer,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let params = wgpu::BufferBinding { buffer: uniform, offset: 0, size: wgpu::BufferSize::new(kernel.params) };
    let mut entries = vec![wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::Buffer(params) }];
    for (i, b) in buffers.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry { binding: i as u32 + 1, resource: b.as_entire_binding() });
    }
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &kernel.layout, entries: &entries })
}

/// Records one dispatch of `kernel` over `threads` invocations of a 64-wide workgroup, spread
/// over x and y so that no dimension exceeds 65535 workgroups.
fn dispatch(pass: &mut wgpu::ComputePass<'_>, kernel: &Kernel, group: &wgpu::BindGroup, offset: u32, threads: u32) {
    let groups = threads.div_ceil(WORKGROUP).max(1);
    let x = groups.min(65535);
    dispatch_grid(pass, kernel, group, offset, (x, groups.div_ceil(x)));
}

/// Records one dispatch of `kernel` with `group`, its parameters at byte `offset` of the
/// uniform buffer, over a `(x, y)` grid of workgroups.
fn dispatch_grid(
    pass: &mut wgpu::ComputePass<'_>,
    kernel: &Kernel,
    group: &wgpu::BindGroup,
    offset: u32,
    (x, y): (u32, u32),
) {
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, group, &[offset]);
    pass.dispatch_workgroups(x, y, 1);
}

/// The parameters of one batch's dispatches, one aligned slot each, in recording order.
struct Slots {
    bytes: Vec<u8>,
    stride: usize,
    capacity: usize,
}

impl Slots {
    fn new(alignment: u32, capacity: usize) -> Slots {
        let stride = MAX_PARAMS.next_multiple_of(alignment.max(1) as usize);
        Slots { bytes: Vec::with_capacity(stride * capacity), stride, capacity }
    }

    fn capacity_bytes(&self) -> u64 {
        (self.stride * self.capacity) as u64
    }

    fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Appends `params` in the next slot and returns its byte offset.
    fn push<T: bytemuck::Pod>(&mut self, params: &T) -> u32 {
        let offset = self.bytes.len();
        debug_assert!(offset < self.stride * self.capacity, "more dispatches than slots");
        self.bytes.extend_from_slice(bytemuck::bytes_of(params));
        self.bytes.resize(offset + self.stride, 0);
        offset as u32
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl GpuFlow {
    /// [`GpuFlow::new`], blocking (native only).
    pub fn new_blocking() -> Result<GpuFlow, GpuError> {
        pollster::block_on(GpuFlow::new())
    }

    /// [`GpuFlow::from_device`], blocking (native only).
    pub fn from_device_blocking(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: &wgpu::AdapterInfo,
    ) -> Result<GpuFlow, GpuError> {
        pollster::block_on(GpuFlow::from_device(device, queue, info))
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
