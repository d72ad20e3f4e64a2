# Prelude for `attn_gym.masks` (attention-gym 0.0.17, PyPI `attn-gym`): the package's mask_mods
# and mask factories, rewritten from their documented behaviour in the interpreter's subset of
# Python. tests/python/test_library_masks.py checks every function here against the real package
# with torch's create_mask.
#
# Covered (everything `attn_gym.masks.__init__` exports that is or returns a mask_mod, plus the
# public helpers of its modules that building their inputs needs):
#   causal_mask, batchify_mask_mod, generate_block_diffusion_mask,
#   generate_dilated_sliding_window, generate_doc_mask_mod, generate_packed_causal_doc_mask_mod,
#   length_to_offsets (document_mask), generate_vision_cross_attention_mask_mod,
#   generate_global_sliding_window, build_tree_ancestor_matrix,
#   generate_jetspec_tree_causal_mask_mod, generate_jetspec_training_mask_mod, generate_natten,
#   generate_tiled_natten, generate_morton_natten (with interleave_bits_32, deinterleave_bits_32,
#   morton_encode, morton_decode), generate_prefix_lm_mask, generate_shared_prefix_mask_mod,
#   generate_sliding_window, generate_sta_mask_mod_2d, generate_sta_mask_mod_3d,
#   generate_spatial_head_mask_mod, generate_temporal_head_mask_mod, generate_vsa_mask_mod,
#   generate_vsa_padding_mask_mod (vsa; not re-exported by __init__, but a mask factory).
#   generate_random_lengths (document_mask.py, not exported): an example batch's document lengths,
#   drawn from the `random` module shared with the importing file (so its `random.seed` decides).
#
# Skipped, and why:
#   - attn_gym.mods (generate_alibi_bias, generate_tanh_softcap, generate_activation_score_mod,
#     undo_softmax, generate_graphormer_edge_bias, generate_graphormer_spatial_bias,
#     shortest_path_distances, shortest_path_edge_types, generate_mla_rope_score_mod,
#     generate_sandwich_bias): score_mods (five arguments, a score in and a score out) or their
#     tensor helpers, not masks; they are not in attn_gym.masks either.
#   - VSA's non-mask exports (VSACoarseResult, VSATileMetadata: dataclasses;
#     compute_vsa_coarse_attention, compute_vsa_tile_scores, compute_vsa_topk_indices,
#     pool_to_vsa_tiles, tile_vsa_sequence, untile_vsa_sequence, lift_vsa_tile_output,
#     vsa_additive_combine, vsa_gated_mix, vsa_topk_from_sparsity, create_vsa_tile_metadata,
#     validate_vsa_block_mask_inputs: attention arithmetic on q/k/v tensors; create_vsa_block_mask,
#     create_vsa_flash_block_mask: BlockMask builders). The top-k tile indices that
#     generate_vsa_mask_mod takes must be given as a tensor.
#   - create_causal_block_mask_fast (causal.py, not exported): builds a BlockMask, not a mask_mod.
#   - every module's main(): visualisation demos.
#
# Differences a caller can see (none in the masks):
#   - `device` arguments (length_to_offsets, build_tree_ancestor_matrix) are accepted and ignored;
#     everything lives on the CPU. The library's `.to(device=...)` moves are left out for the same
#     reason, and so is generate_shared_prefix_mask_mod's same-device assertion.
#   - Document ids and image ids are built with Python lists instead of repeat_interleave; the
#     tensors are equal (values and dtype), and negative lengths are refused as there.
#
# What this file asks of the interpreter beyond the mask functions' operators:
#   builtins len, range, str; `x is None`; tuple unpacking; lists (`+`, `* int`, indexing,
#   .append, .extend); torch.tensor(list, dtype=...), torch.zeros(shape, dtype=...),
#   torch.cumsum(t, dim=-1), torch.bool, torch.int32, torch.int64;
#   tensor .tolist(), .dim(), .shape[i], .to(dtype=...); `&` and `|` on integer tensors (bitwise,
#   natten's Morton layout, with hex literals); indexing a closure tensor with a tuple of indices
#   (`intervals[image_idx, 0]`, `ancestor_matrix[q_idx, tree_idx]`, `topk_indices[b, h, q, k]`);
#   `.clamp(lo, hi)` and `.clamp(min=, max=)`; `fn.__name__` read (batchify) and assigned.

import random

import torch


def causal_mask(b, h, q_idx, kv_idx):
    # A query sees itself and every earlier key.
    return q_idx >= kv_idx


def batchify_mask_mod(mask_mod, batchify_size):
    # Cuts the sequence into groups of `batchify_size` tokens; a query sees a key only inside its own
    # group, and there `mask_mod` decides, on positions counted from the group's start.
    def batched_mask_mod(b, h, q_idx, kv_idx):
        same_group = (q_idx // batchify_size) == (kv_idx // batchify_size)
        inside = mask_mod(b, h, q_idx % batchify_size, kv_idx % batchify_size)
        return same_group & inside

    batched_mask_mod.__name__ = (
        "batched_mask_mod_" + str(mask_mod.__name__) + "_batch_size_" + str(batchify_size)
    )
    return batched_mask_mod


def generate_block_diffusion_mask(seq_len, block_size):
    # BD3-LM training over 2 * seq_len positions: [0, seq_len) noised, [seq_len, 2 * seq_len) clean,
    # both cut into blocks of `block_size`. Noised tokens see their own noised block and strictly
    # earlier clean blocks; clean tokens see clean blocks up to their own; nothing sees noised
    # tokens of another block.
    def block_diffusion_mask(b, h, q_idx, kv_idx):
        q_is_noised = q_idx < seq_len
        kv_is_noised = kv_idx < seq_len
        q_blk = (q_idx % seq_len) // block_size
        kv_blk = (kv_idx % seq_len) // block_size
        own_block = (q_blk == kv_blk) & (q_is_noised == kv_is_noised)
        earlier_clean_for_noised = (q_blk > kv_blk) & q_is_noised & ~kv_is_noised
        clean_causal = (q_blk >= kv_blk) & ~q_is_noised & ~kv_is_noised
        return own_block | earlier_clean_for_noised | clean_causal

    block_diffusion_mask.__name__ = "block_diffusion_" + str(seq_len) + "_" + str(block_size)
    return block_diffusion_mask


def generate_dilated_sliding_window(window_size, dilation):
    # Symmetric window: distance at most window_size and a multiple of dilation.
    def dilated_sliding_window(b, h, q_idx, kv_idx):
        distance = torch.abs(q_idx - kv_idx)
        return (distance <= window_size) & ((distance % dilation) == 0)

    dilated_sliding_window.__name__ = (
        "dilated_sliding_window_" + str(window_size) + "_dilation_" + str(dilation)
    )
    return dilated_sliding_window


def _offsets_to_doc_ids_tensor(offsets):
    # One int32 entry per token: document k fills offsets[k + 1] - offsets[k] places, in order
    # (so the table starts at index 0 whatever offsets[0] is).
    bounds = offsets.tolist()
    ids = []
    for doc in range(len(bounds) - 1):
        count = bounds[doc + 1] - bounds[doc]
        if count < 0:
            raise RuntimeError("repeats can not be negative")
        ids.extend([doc] * count)
    return torch.tensor(ids, dtype=torch.int32)


def length_to_offsets(lengths, device):
    # Document lengths -> cumulative offsets [0, l0, l0 + l1, ...]: the lengths as int32, summed
    # into int64 (cumsum's result type for int32).
    values = [0]
    values.extend(lengths)
    return torch.cumsum(torch.tensor(values, dtype=torch.int32), dim=-1)


def generate_doc_mask_mod(mask_mod, offsets):
    # Packed documents: a query sees a key only in its own document, where `mask_mod` decides on
    # positions counted from the document's start.
    document_id = _offsets_to_doc_ids_tensor(offsets)

    def doc_mask_mod(b, h, q_idx, kv_idx):
        q_doc = document_id[q_idx]
        kv_doc = document_id[kv_idx]
        inside = mask_mod(b, h, q_idx - offsets[q_doc], kv_idx - offsets[kv_doc])
        return (q_doc == kv_doc) & inside

    return doc_mask_mod


def generate_packed_causal_doc_mask_mod(offsets):
    # Causal attention inside each packed document: keys from the query's document start up to the
    # query itself.
    document_id = _offsets_to_doc_ids_tensor(offsets)

    def doc_causal_mask_mod(b, h, q_idx, kv_idx):
        start = offsets[document_id[q_idx]]
        return (kv_idx >= start) & (q_idx >= kv_idx)

    return doc_causal_mask_mod


def generate_vision_cross_attention_mask_mod(intervals, image_token_length):
    # Flamingo cross attention: keys are images of image_token_length tokens each; image i is seen
    # by the text queries in [intervals[i, 0], intervals[i, 1]).
    num_images = intervals.shape[0]
    if image_token_length < 0:
        raise RuntimeError("Repeats must be non-negative")
    owners = []
    for image in range(num_images):
        owners.extend([image] * image_token_length)
    image_boundaries = torch.tensor(owners, dtype=torch.int64)

    def vision_cross_attention_mask_mod(b, h, q_idx, kv_idx):
        image = image_boundaries[kv_idx]
        return (q_idx >= intervals[image, 0]) & (q_idx < intervals[image, 1])

    return vision_cross_attention_mask_mod


def generate_global_sliding_window(window_size, is_global):
    # Longformer: a symmetric window of radius window_size, plus global tokens (is_global[i]) that
    # see and are seen by every position.
    def global_sliding_window(b, h, q_idx, kv_idx):
        result = q_idx.new_zeros((), dtype=torch.bool)
        result = result | ((q_idx - kv_idx).abs() <= window_size)
        result = result | (is_global[q_idx] | is_global[kv_idx])
        return result

    global_sliding_window.__name__ = "global_sliding_window_" + str(window_size)
    return global_sliding_window


def build_tree_ancestor_matrix(parent_indices, device="cuda"):
    # ancestor[i, j]: node j is on the path from the root to node i (i itself included). Nodes come
    # parent before child; entry 0 (the root's parent) is ignored. Rows are settled in order, each
    # as its own identity row joined with its parent's row as it stands at that moment (a parent
    # not yet settled still has only its identity row). Python's negative indices count from the
    # end, as tensor rows do.
    n = len(parent_indices)
    if n == 0:
        return torch.zeros((0, 0), dtype=torch.bool)
    rows = []
    for node in range(n):
        own = [False] * node + [True] + [False] * (n - 1 - node)
        if node == 0:
            rows.append(own)
        else:
            parent = parent_indices[node]
            if parent < -n:
                raise IndexError("index " + str(parent) + " is out of bounds for dimension 0 with size " + str(n))
            if parent >= n:
                raise IndexError("index " + str(parent) + " is out of bounds for dimension 0 with size " + str(n))
            if parent < 0:
                parent = parent + n
            if parent < node:
                parent_row = rows[parent]
            else:
                parent_row = [False] * parent + [True] + [False] * (n - 1 - parent)
            merged = []
            for j in range(n):
                if parent_row[j]:
                    merged.append(True)
                else:
                    merged.append(own[j])
            rows.append(merged)
    return torch.tensor(rows, dtype=torch.bool)


def generate_jetspec_tree_causal_mask_mod(prefix_length, ancestor_matrix):
    # Tree drafting: queries are the tree's nodes, keys the prefix then the nodes. Every query sees
    # the whole prefix, and among the nodes its ancestors (itself included).
    assert prefix_length >= 0, "prefix_length must be non-negative"
    assert ancestor_matrix.dim() == 2, "ancestor_matrix must be 2D"
    assert ancestor_matrix.shape[0] == ancestor_matrix.shape[1], "ancestor_matrix must be square"
    num_tree_nodes = ancestor_matrix.shape[0]
    assert num_tree_nodes > 0, "ancestor_matrix must describe at least one tree node"
    ancestors = ancestor_matrix.to(dtype=torch.bool)
    tree_end = prefix_length + num_tree_nodes

    def jetspec_tree_causal_mask_mod(b, h, q_idx, kv_idx):
        node = (kv_idx - prefix_length).clamp(min=0, max=num_tree_nodes - 1)
        in_tree = (kv_idx >= prefix_length) & (kv_idx < tree_end)
        return (kv_idx < prefix_length) | (in_tree & ancestors[q_idx, node])

    jetspec_tree_causal_mask_mod.__name__ = (
        "jetspec_tree_causal_mask_p" + str(prefix_length) + "_n" + str(num_tree_nodes)
    )
    return jetspec_tree_causal_mask_mod


def generate_jetspec_training_mask_mod(prefix_length, block_size):
    # Draft-head training: queries are sampled blocks of block_size tokens, keys the prefix then
    # those blocks. A query sees the whole prefix and, in its own block, the positions up to its own.
    assert prefix_length >= 0, "prefix_length must be non-negative"
    assert block_size > 0, "block_size must be positive"

    def jetspec_training_mask_mod(b, h, q_idx, kv_idx):
        kv_in_blocks = kv_idx - prefix_length
        same_block = (q_idx // block_size) == (kv_in_blocks // block_size)
        not_ahead = (kv_in_blocks % block_size) <= (q_idx % block_size)
        return (kv_idx < prefix_length) | ((kv_idx >= prefix_length) & same_block & not_ahead)

    jetspec_training_mask_mod.__name__ = (
        "jetspec_training_mask_p" + str(prefix_length) + "_block" + str(block_size)
    )
    return jetspec_training_mask_mod


def _natten_window(q_x, q_y, kv_x, kv_y, extent_x, extent_y, kernel_x, kernel_y):
    # The kernel is centred on the query, its centre held kernel//2 away from the canvas edges;
    # extent_x bounds the first coordinate, extent_y the second.
    half_x = kernel_x // 2
    half_y = kernel_y // 2
    centre_x = q_x.clamp(half_x, (extent_x - 1) - half_x)
    centre_y = q_y.clamp(half_y, (extent_y - 1) - half_y)
    along_x = (centre_x - half_x <= kv_x) & (kv_x <= centre_x + half_x)
    along_y = (centre_y - half_y <= kv_y) & (kv_y <= centre_y + half_y)
    return along_x & along_y


def generate_natten(canvas_w, canvas_h, kernel_w, kernel_h):
    # Neighbourhood attention on a row-major canvas. As in the library, the first coordinate is
    # idx // canvas_w and the second idx % canvas_w; the first is bounded by canvas_w and kernel_w,
    # the second by canvas_h and kernel_h (the same thing on square canvases and kernels).
    def natten_mask_mod(b, h, q_idx, kv_idx):
        return _natten_window(
            q_idx // canvas_w, q_idx % canvas_w, kv_idx // canvas_w, kv_idx % canvas_w,
            canvas_w, canvas_h, kernel_w, kernel_h,
        )

    natten_mask_mod.__name__ = (
        "natten_c" + str(canvas_w) + "x" + str(canvas_h) + "_k" + str(kernel_w) + "x" + str(kernel_h)
    )
    return natten_mask_mod


def generate_tiled_natten(W, H, K_W, K_H, T_W, T_H):
    # Neighbourhood attention on a canvas stored as row-major tiles of T_H x T_W tokens, the tiles
    # themselves row-major (W // T_W of them per row).
    tile_size = T_H * T_W
    tiles_per_row = W // T_W

    def column_of(idx):
        tile = idx // tile_size
        return (tile % tiles_per_row) * T_W + (idx % tile_size) % T_W

    def row_of(idx):
        tile = idx // tile_size
        return (tile // tiles_per_row) * T_H + (idx % tile_size) // T_W

    def tiled_natten_mask(b, h, q_idx, kv_idx):
        return _natten_window(
            column_of(q_idx), row_of(q_idx), column_of(kv_idx), row_of(kv_idx), W, H, K_W, K_H
        )

    tiled_natten_mask.__name__ = (
        "tiled_natten_c" + str(W) + "x" + str(H) + "_k" + str(K_W) + "x" + str(K_H)
        + "_t" + str(T_W) + "x" + str(T_H)
    )
    return tiled_natten_mask


def interleave_bits_32(x):
    # Spreads the low 16 bits of x to the even bit positions 0, 2, ..., 30 (shifts written as
    # multiplications; the masks keep every value non-negative).
    x = x & 0x0000FFFF
    x = (x | (x * 256)) & 0x00FF00FF
    x = (x | (x * 16)) & 0x0F0F0F0F
    x = (x | (x * 4)) & 0x33333333
    x = (x | (x * 2)) & 0x55555555
    return x


def morton_encode(x, y):
    # Z-order index: x on the even bits, y on the odd ones.
    return (interleave_bits_32(y) * 2) | interleave_bits_32(x)


def deinterleave_bits_32(code):
    # Gathers the even bits 0, 2, ..., 30 of code into bits 0..15 (inverse of interleave_bits_32;
    # right shifts written as floor divisions, which they equal on non-negative values).
    code = code & 0x55555555
    code = (code | (code // 2)) & 0x33333333
    code = (code | (code // 4)) & 0x0F0F0F0F
    code = (code | (code // 16)) & 0x00FF00FF
    code = (code | (code // 256)) & 0x0000FFFF
    return code


def morton_decode(code):
    # (x, y) from a Z-order index. code // 2 is code >> 1 for every integer (floor division).
    return deinterleave_bits_32(code), deinterleave_bits_32(code // 2)


def generate_morton_natten(canvas_w, canvas_h, kernel_w, kernel_h):
    # Neighbourhood attention with tokens laid out along a Morton (Z-order) curve.
    def natten_mask_mod(b, h, q_idx, kv_idx):
        q_x, q_y = morton_decode(q_idx)
        kv_x, kv_y = morton_decode(kv_idx)
        return _natten_window(q_x, q_y, kv_x, kv_y, canvas_w, canvas_h, kernel_w, kernel_h)

    natten_mask_mod.__name__ = (
        "morton_natten_c" + str(canvas_w) + "x" + str(canvas_h)
        + "_k" + str(kernel_w) + "x" + str(kernel_h)
    )
    return natten_mask_mod


def generate_prefix_lm_mask(prefix_length):
    # Prefix LM: every query sees the first prefix_length keys, and is causal otherwise.
    def prefix_lm_causal_mask(b, h, q_idx, kv_idx):
        result = q_idx.new_zeros((), dtype=torch.bool)
        result = result | (kv_idx < prefix_length)
        result = result | (q_idx >= kv_idx)
        return result

    prefix_lm_causal_mask.__name__ = "prefix_lm_causal_mask_" + str(prefix_length)
    return prefix_lm_causal_mask


def generate_shared_prefix_mask_mod(offsets, prefix_document_id):
    # Packed prompt/continuation documents: each document is causal inside itself, and a
    # continuation document (one whose prefix_document_id is another document) also sees the whole
    # of its prefix document.
    assert offsets.dim() == 1
    assert prefix_document_id.dim() == 1
    assert prefix_document_id.shape[0] + 1 == offsets.shape[0]
    document_id = _offsets_to_doc_ids_tensor(offsets)

    def shared_prefix_mask_mod(b, h, q_idx, kv_idx):
        q_doc = document_id[q_idx]
        q_prefix = prefix_document_id[q_doc]
        own_causal = (kv_idx >= offsets[q_doc]) & (q_idx >= kv_idx)
        in_prefix = (
            (q_doc != q_prefix) & (kv_idx >= offsets[q_prefix]) & (kv_idx < offsets[q_prefix + 1])
        )
        return own_causal | in_prefix

    shared_prefix_mask_mod.__name__ = "shared_prefix_mask_mod"
    return shared_prefix_mask_mod


def generate_sliding_window(window_size):
    # Causal, looking back at most window_size keys (window_size + 1 keys with the query's own).
    def sliding_window(b, h, q_idx, kv_idx):
        result = q_idx.new_ones((), dtype=torch.bool)
        result = result & (q_idx - kv_idx <= window_size)
        result = result & (q_idx >= kv_idx)
        return result

    sliding_window.__name__ = "sliding_window_" + str(window_size)
    return sliding_window


def _sta_borders(kernel_tiles):
    # Tiles a kernel reaches before and after its centre tile (one fewer after when even).
    return kernel_tiles // 2, kernel_tiles // 2 + (kernel_tiles % 2 - 1)


def _sta_axis(q_tile, kv_tile, canvas_tiles, kernel_tiles):
    # One axis of the sliding tile window: the kernel's centre tile follows the query's tile,
    # held inside the canvas.
    before, after = _sta_borders(kernel_tiles)
    centre = q_tile.clamp(before, (canvas_tiles - 1) - after)
    return (kv_tile >= centre - before) & (kv_tile <= centre + after)


def _sta_text(q_idx, kv_idx, vision_seq_len, text_seq_len):
    # Vision queries also see the text keys; text queries see everything up to the text's end.
    text_end = vision_seq_len + text_seq_len
    vision_to_text = (q_idx < vision_seq_len) & (kv_idx >= vision_seq_len) & (kv_idx < text_end)
    text_to_all = (q_idx >= vision_seq_len) & (kv_idx < text_end)
    return vision_to_text | text_to_all


def _sta_divides(whole, part, what, part_what):
    assert whole % part == 0, (
        what + " " + str(whole) + " is not divisible by " + part_what + " " + str(part)
    )


def generate_sta_mask_mod_2d(canvas_hw, kernel_hw, tile_hw, text_seq_len=0):
    # Sliding tile attention on an image of canvas_hw tokens stored as row-major tiles of tile_hw
    # tokens; the kernel (kernel_hw tokens, whole tiles) moves tile by tile. Text tokens follow the
    # image.
    canvas_h, canvas_w = canvas_hw
    kernel_h, kernel_w = kernel_hw
    tile_h, tile_w = tile_hw
    _sta_divides(canvas_h, tile_h, "Canvas height", "tile height")
    _sta_divides(canvas_w, tile_w, "Canvas width", "tile width")
    _sta_divides(kernel_h, tile_h, "Kernel height", "tile height")
    _sta_divides(kernel_w, tile_w, "Kernel width", "tile width")
    tile_numel = tile_h * tile_w
    tiles_h = canvas_h // tile_h
    tiles_w = canvas_w // tile_w
    kernel_tiles_h = kernel_h // tile_h
    kernel_tiles_w = kernel_w // tile_w
    vision_seq_len = canvas_h * canvas_w

    def sta_mask_mod_2d(b, h, q_idx, kv_idx):
        q_tile = q_idx // tile_numel
        kv_tile = kv_idx // tile_numel
        along_h = _sta_axis(q_tile // tiles_w, kv_tile // tiles_w, tiles_h, kernel_tiles_h)
        along_w = _sta_axis(q_tile % tiles_w, kv_tile % tiles_w, tiles_w, kernel_tiles_w)
        vision = (q_idx < vision_seq_len) & (kv_idx < vision_seq_len)
        return (vision & along_h & along_w) | _sta_text(q_idx, kv_idx, vision_seq_len, text_seq_len)

    sta_mask_mod_2d.__name__ = (
        "sta_2d_c" + str(canvas_h) + "x" + str(canvas_w) + "_k" + str(kernel_h) + "x" + str(kernel_w)
        + "_t" + str(tile_h) + "x" + str(tile_w)
    )
    return sta_mask_mod_2d


def generate_sta_mask_mod_3d(canvas_twh, kernel_twh, tile_twh, text_seq_len=0):
    # The same over video: canvas_twh = (time, height, width), tiles ordered time, then row, then
    # column.
    canvas_t, canvas_h, canvas_w = canvas_twh
    kernel_t, kernel_h, kernel_w = kernel_twh
    tile_t, tile_h, tile_w = tile_twh
    _sta_divides(canvas_t, tile_t, "Canvas time", "tile time")
    _sta_divides(canvas_h, tile_h, "Canvas height", "tile height")
    _sta_divides(canvas_w, tile_w, "Canvas width", "tile width")
    _sta_divides(kernel_t, tile_t, "Kernel time", "tile time")
    _sta_divides(kernel_h, tile_h, "Kernel height", "tile height")
    _sta_divides(kernel_w, tile_w, "Kernel width", "tile width")
    tile_numel = tile_t * tile_h * tile_w
    tiles_t = canvas_t // tile_t
    tiles_h = canvas_h // tile_h
    tiles_w = canvas_w // tile_w
    frame_tiles = tiles_h * tiles_w
    kernel_tiles_t = kernel_t // tile_t
    kernel_tiles_h = kernel_h // tile_h
    kernel_tiles_w = kernel_w // tile_w
    vision_seq_len = canvas_t * canvas_h * canvas_w

    def sta_mask_mod_3d(b, h, q_idx, kv_idx):
        q_tile = q_idx // tile_numel
        kv_tile = kv_idx // tile_numel
        along_t = _sta_axis(q_tile // frame_tiles, kv_tile // frame_tiles, tiles_t, kernel_tiles_t)
        along_h = _sta_axis(
            (q_tile % frame_tiles) // tiles_w, (kv_tile % frame_tiles) // tiles_w, tiles_h, kernel_tiles_h
        )
        along_w = _sta_axis(q_tile % tiles_w, kv_tile % tiles_w, tiles_w, kernel_tiles_w)
        vision = (q_idx < vision_seq_len) & (kv_idx < vision_seq_len)
        return (vision & along_t & along_w & along_h) | _sta_text(
            q_idx, kv_idx, vision_seq_len, text_seq_len
        )

    sta_mask_mod_3d.__name__ = (
        "sta_3d_c" + str(canvas_t) + "x" + str(canvas_h) + "x" + str(canvas_w)
        + "_k" + str(kernel_t) + "x" + str(kernel_h) + "x" + str(kernel_w)
        + "_t" + str(tile_t) + "x" + str(tile_h) + "x" + str(tile_w)
    )
    return sta_mask_mod_3d


def generate_spatial_head_mask_mod(
    prompt_length=226, num_frames=13, token_per_frame=1350, width=2, attn_sink=False, round_width=128
):
    # Sparse VideoGen spatial head: prompt rows see everything, every row sees the prompt columns
    # (and the first frame too with attn_sink), and otherwise a band of half-width
    # width * token_per_frame rounded down to a multiple of round_width. num_frames is unused.
    # (The band is worked out on each call, as there, so a zero round_width fails at the call.)
    def spatial_mask_mod(b, h, q_idx, kv_idx):
        if attn_sink:
            seen_by_all = prompt_length + token_per_frame
        else:
            seen_by_all = prompt_length
        band = (width * token_per_frame) // round_width * round_width
        return (kv_idx < seen_by_all) | (q_idx < prompt_length) | (torch.abs(q_idx - kv_idx) < band)

    return spatial_mask_mod


def generate_temporal_head_mask_mod(prompt_length=226, num_frames=13, token_per_frame=1350, width=2):
    # Sparse VideoGen temporal head: prompt rows and columns are full; otherwise tokens at nearby
    # positions within their frames (any frames) attend, within (width * token_per_frame) //
    # num_frames.
    def temporal_mask_mod(b, h, q_idx, kv_idx):
        band = (width * token_per_frame) // num_frames
        q_in_frame = (q_idx - prompt_length) % token_per_frame
        kv_in_frame = (kv_idx - prompt_length) % token_per_frame
        return (kv_idx < prompt_length) | (q_idx < prompt_length) | (
            torch.abs(q_in_frame - kv_in_frame) < band
        )

    return temporal_mask_mod


def generate_vsa_mask_mod(topk_indices, tile_numel, variable_block_sizes=None):
    # Video sparse attention's fine pass: tokens form tiles of tile_numel; a query sees the keys of
    # the tiles listed in topk_indices[b, h, its tile, :], and with variable_block_sizes only the
    # first variable_block_sizes[tile] tokens of each key tile (the rest are padding).
    if topk_indices.dim() != 4:
        raise ValueError(
            "topk_indices must have shape (B, H, Q_TILES, TOP_K), got " + str(topk_indices.shape)
        )
    if tile_numel <= 0:
        raise ValueError("tile_numel must be positive, got " + str(tile_numel))
    top_k = topk_indices.shape[3]

    def vsa_mask_mod(b, h, q_idx, kv_idx):
        q_tile = q_idx // tile_numel
        kv_tile = kv_idx // tile_numel
        chosen = q_idx.new_zeros((), dtype=torch.bool)
        for k in range(top_k):
            chosen = chosen | (topk_indices[b, h, q_tile, k] == kv_tile)
        if variable_block_sizes is None:
            return chosen
        return chosen & (kv_idx % tile_numel < variable_block_sizes[kv_tile])

    vsa_mask_mod.__name__ = "vsa_topk_t" + str(tile_numel) + "_k" + str(top_k)
    return vsa_mask_mod


def generate_vsa_padding_mask_mod(variable_block_sizes, tile_numel):
    # Only the padding filter: key token kv is real when its place in its tile is below that tile's
    # count of real tokens.
    if tile_numel <= 0:
        raise ValueError("tile_numel must be positive, got " + str(tile_numel))

    def vsa_padding_mask_mod(b, h, q_idx, kv_idx):
        return kv_idx % tile_numel < variable_block_sizes[kv_idx // tile_numel]

    vsa_padding_mask_mod.__name__ = "vsa_padding_t" + str(tile_numel)
    return vsa_padding_mask_mod


def generate_random_lengths(total_length, num_documents):
    # Every document starts one token long; each token left over then joins a document picked
    # uniformly with random.randint, one token at a time (the picks in the library's order,
    # counted per document).
    picks = []
    for _ in range(total_length - num_documents):
        picks.append(random.randint(0, num_documents - 1))
    counts = torch.bincount(torch.tensor(picks, dtype=torch.int64), minlength=num_documents)
    return (counts + 1).tolist()
