# hasseflow-case: n=48 b=2 h=0 category=batchhead
import torch

SEQ_LEN = 48
EOS_ID = 2
batch_tokens = torch.full((4, SEQ_LEN), 11, dtype=torch.long)  # filler tokens
eos_positions = [[5, 30], [12], [9, 20, 33, 40], []]
for row, positions in enumerate(eos_positions):
    for p in positions:
        batch_tokens[row, p] = EOS_ID

# document index of every token in every row; a document ends with its EOS token
sequence_indices = torch.zeros_like(batch_tokens)
for row in range(batch_tokens.shape[0]):
    starts = (batch_tokens[row] == EOS_ID).long()
    sequence_indices[row, 1:] = torch.cumsum(starts, dim=0)[:-1]


def document_mask(b, h, q_idx, kv_idx):
    causal = q_idx >= kv_idx
    return causal & (sequence_indices[b, q_idx] == sequence_indices[b, kv_idx])


mask_mod = document_mask
