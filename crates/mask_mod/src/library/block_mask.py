# Prelude, second part of `torch.nn.attention.flex_attention` (run after flex_attention.py, in the
# same module): create_mask (the dense mask, read as a table by some masks), and BlockMask,
# create_block_mask and BlockMask.from_kv_blocks, which build the object
# FlexAttention takes, with its mask_mod, shape, BLOCK_SIZE and block tables (kv_num_blocks,
# kv_indices, full_kv_*) as torch gives them; the tables are computed when first read, by the
# conversion torch documents (count the attended cells of each block; a block with every cell is
# full, one with some is partial; the tables list them in order, int32). A BlockMask taken as the
# mask is the block structure combined with its mask_mod, as the FlexAttention kernel applies it:
# a cell is attended when its key block is a full block of its query block, or a partial block
# where the mask_mod holds. The private names public code reads (_DEFAULT_SPARSE_BLOCK_SIZE,
# _mask_mod_signature, _score_mod_signature, _identity, _round_up_to_multiple) are here too.
# tests/python/test_library_masks.py checks the tables against torch's.

import torch
import hasseflow


_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1073741824
# typing.Callable aliases in torch; classes here, so that annotations such as
# `_score_mod_signature | None` evaluate as they do there.
class _mask_mod_signature:
    pass


class _score_mod_signature:
    pass



def _identity(score, batch, head, token_q, token_kv):
    return score


def _round_up_to_multiple(x, multiple):
    # The next multiple of `multiple` from x up (x itself when it is one).
    return (x + multiple - 1) // multiple * multiple


def _pair(block_size):
    if isinstance(block_size, int):
        return (block_size, block_size)
    return (block_size[0], block_size[1])


def _blocks_of(sums, q_block, kv_block):
    # From the attended cells of each (b, h, query block, key block), as torch's conversion
    # counts them (the padding past the sequence counts as masked): full and partial blocks.
    cells = q_block * kv_block
    partial = (sums > 0) & (sums < cells)
    full = sums == cells
    return partial, full


def _tables(blocks):
    num = blocks.sum(dim=-1).to(torch.int32)
    idx = torch.argsort(blocks.to(torch.int32), dim=-1, descending=True, stable=True).to(torch.int32)
    return num, idx


def _dense_of(num, idx, nk):
    # The key blocks each query block lists: the first num entries of its row of idx.
    slots = torch.arange(idx.shape[-1])
    listed = slots < num.unsqueeze(-1)
    hits = (idx.long().unsqueeze(-1) == torch.arange(nk)) & listed.unsqueeze(-1)
    return hits.to(torch.int32).sum(dim=-2) > 0


class BlockMask:
    def __init__(self, mask_mod, shape, block_size, partial, full, tables):
        self.mask_mod = mask_mod
        self.shape = shape
        self.seq_lengths = (shape[2], shape[3])
        self.BLOCK_SIZE = block_size
        self._partial = partial
        self._full = full
        self._tables = tables

    def _built(self):
        if self._partial is None:
            B, H, Q, KV = self.shape
            # The reader counts the cells natively: the mask_mod traced once, as vmap calls it.
            sums = hasseflow.block_counts(self.mask_mod, B, H, Q, KV, self.BLOCK_SIZE[0], self.BLOCK_SIZE[1])
            self._partial, self._full = _blocks_of(sums, self.BLOCK_SIZE[0], self.BLOCK_SIZE[1])
        if self._tables is None:
            num, idx = _tables(self._partial)
            full_num, full_idx = _tables(self._full)
            self._tables = (num, idx, full_num, full_idx)
        return self._tables

    @property
    def kv_num_blocks(self):
        return self._built()[0]

    @property
    def kv_indices(self):
        return self._built()[1]

    @property
    def full_kv_num_blocks(self):
        return self._built()[2]

    @property
    def full_kv_indices(self):
        return self._built()[3]

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None, full_kv_indices=None,
                       BLOCK_SIZE=128, mask_mod=None, seq_lengths=None, compute_q_blocks=True):
        block_size = _pair(BLOCK_SIZE)
        if mask_mod is None:
            mask_mod = noop_mask
        nq = kv_num_blocks.shape[-1]
        nk = kv_indices.shape[-1]
        if seq_lengths is None:
            seq_lengths = (nq * block_size[0], nk * block_size[1])
        shape = (kv_num_blocks.shape[0], kv_num_blocks.shape[1], seq_lengths[0], seq_lengths[1])
        partial = _dense_of(kv_num_blocks, kv_indices, nk)
        if full_kv_num_blocks is None:
            full = partial & False
            full_num = None
            full_idx = None
        else:
            full = _dense_of(full_kv_num_blocks, full_kv_indices, nk)
            full_num = full_kv_num_blocks
            full_idx = full_kv_indices
        return cls(mask_mod, shape, block_size, partial, full, (kv_num_blocks, kv_indices, full_num, full_idx))

    def to(self, device):
        return self

    def __getitem__(self, index):
        # torch selects batch, head and Q-block rows, packs them and resets mask_mod.
        hasseflow.unsupported("slicing a BlockMask (batch, head and Q-block rows, its mask_mod reset)")

    def _hasseflow_mask(self, b, h, q_idx, kv_idx):
        # The mask FlexAttention applies: full blocks, or partial blocks where mask_mod holds.
        self._built()
        bb = b if self._partial.shape[0] > 1 else b * 0
        hh = h if self._partial.shape[1] > 1 else h * 0
        qb = q_idx // self.BLOCK_SIZE[0]
        kb = kv_idx // self.BLOCK_SIZE[1]
        listed = self._partial[bb, hh, qb, kb] & self.mask_mod(b, h, q_idx, kv_idx)
        return self._full[bb, hh, qb, kb] | listed


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device="cuda"):
    # The dense mask, as a bool tensor of shape (B, H, Q_LEN, KV_LEN): each cell a block of its own.
    if B is None:
        B = 1
    if H is None:
        H = 1
    return hasseflow.block_counts(mod_fn, B, H, Q_LEN, KV_LEN, 1, 1, "create_mask") > 0


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device="cuda", BLOCK_SIZE=128, _compile=False):
    if B is None:
        B = 1
    if H is None:
        H = 1
    return BlockMask(mask_mod, (B, H, Q_LEN, KV_LEN), _pair(BLOCK_SIZE), None, None, None)
