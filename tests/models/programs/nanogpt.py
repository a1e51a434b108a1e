"""A character-level GPT trained as nanoGPT trains one on shakespeare_char: nanoGPT's
model.py structure (CausalSelfAttention, MLP, Block, GPT with weight tying and GPT-2's
initialisation, configure_optimizers' decay and no-decay parameter groups for AdamW) and
its train.py loop (get_lr's linear warmup and cosine decay, set into the param groups by
hand; gradient accumulation; clip_grad_norm_; zero_grad(set_to_none=True)). The code is
ours, written after https://github.com/karpathy/nanoGPT (model.py, train.py,
data/shakespeare_char/prepare.py and config/train_shakespeare_char.py).
What differs from nanoGPT, each for a stated reason:
- the text is made here, from a seeded NumPy generator (a few words in random order), and
  encoded as prepare.py encodes Shakespeare (sorted characters, stoi, a 90/10 split);
- get_batch draws its offsets with NumPy, not torch.randint, so that both frameworks
  train on the same batches;
- dropout is 0.0 (the shakespeare_char config has 0.2): dropout draws its masks from each
  framework's own generator;
- a small model and few iterations (max_iters 12), so that the run is short;
- no GradScaler and no autocast: nanoGPT enables them only for float16 on CUDA.
fit(model) is train.py's loop; it returns the loss of every iteration (lossf, as train.py
logs it)."""
import inspect
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = 65  # set from the data: len(chars)
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0
    bias: bool = True


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias, as nanoGPT writes it."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying

        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        # start with all of the candidate parameters
        param_dict = {pn: p for pn, p in self.named_parameters()}
        # filter out those that do not require grad
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        # create optim groups. Any parameters that is 2D will be weight decayed, otherwise no.
        # i.e. all weight tensors in matmuls + embeddings decay, all biases and layernorms don't.
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {'params': decay_params, 'weight_decay': weight_decay},
            {'params': nodecay_params, 'weight_decay': 0.0}
        ]
        self.num_decay_params = sum(p.numel() for p in decay_params)
        self.num_nodecay_params = sum(p.numel() for p in nodecay_params)
        # Create AdamW optimizer and use the fused version if it is available
        fused_available = 'fused' in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == 'cuda'
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        return optimizer

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# -----------------------------------------------------------------------------
# data/shakespeare_char/prepare.py, on a text made here
WORDS = ["to", "be", "or", "not", "that", "is", "the", "question", "whether", "tis",
         "nobler", "in", "mind", "suffer", "slings", "and", "arrows", "of", "outrageous",
         "fortune", "king", "lord", "my", "good", "sweet", "night", "day", "love"]


def make_text(n_words=1200, seed=1337):
    rng = np.random.default_rng(seed)
    lines = []
    for start in range(0, n_words, 8):
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), size=8)]
        lines.append(" ".join(words).capitalize() + ("." if rng.random() < 0.5 else ","))
    return "\n".join(lines) + "\n"


data = make_text()
chars = sorted(list(set(data)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}


def encode(s):
    return [stoi[c] for c in s]


def decode(l):
    return ''.join([itos[i] for i in l])


n = len(data)
train_data = np.array(encode(data[:int(n * 0.9)]), dtype=np.uint16)
val_data = np.array(encode(data[int(n * 0.9):]), dtype=np.uint16)

# -----------------------------------------------------------------------------
# config/train_shakespeare_char.py, smaller
gradient_accumulation_steps = 2
batch_size = 8
block_size = 32
n_layer = 2
n_head = 4
n_embd = 64
dropout = 0.0
bias = True
learning_rate = 1e-3
max_iters = 12
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.99
grad_clip = 1.0
decay_lr = True
warmup_iters = 3
lr_decay_iters = 12
min_lr = 1e-4
device = 'cpu'
device_type = 'cuda' if 'cuda' in device else 'cpu'


def get_batch(split, rng):
    data = train_data if split == 'train' else val_data
    ix = rng.integers(0, len(data) - block_size, size=(batch_size,))
    x = torch.stack([torch.from_numpy((data[i:i+block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i+1:i+1+block_size]).astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


# learning rate decay scheduler (cosine with warmup)
def get_lr(it):
    # 1) linear warmup for warmup_iters steps
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    # 2) if it > lr_decay_iters, return min learning rate
    if it > lr_decay_iters:
        return min_lr
    # 3) in between, use cosine decay down to min learning rate
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    assert 0 <= decay_ratio <= 1
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff ranges 0..1
    return min_lr + coeff * (learning_rate - min_lr)


def build():
    torch.manual_seed(1337)
    model_args = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size,
                      bias=bias, vocab_size=vocab_size, dropout=dropout)
    gptconf = GPTConfig(**model_args)
    return GPT(gptconf).to(device)


def fit(model):
    optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2),
                                           device_type)
    rng = np.random.default_rng(1337)
    losses = []
    model.train()
    X, Y = get_batch('train', rng)  # fetch the very first batch
    iter_num = 0
    while True:
        # determine and set the learning rate for this iteration
        lr = get_lr(iter_num) if decay_lr else learning_rate
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
        # forward backward update, with optional gradient accumulation
        for micro_step in range(gradient_accumulation_steps):
            logits, loss = model(X, Y)
            # scale the loss to account for gradient accumulation
            loss = loss / gradient_accumulation_steps
            # immediately async prefetch next batch while model is doing the forward pass
            X, Y = get_batch('train', rng)
            loss.backward()
        # clip the gradient
        if grad_clip != 0.0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        # flush the gradients as soon as we can, no need for them anymore
        optimizer.zero_grad(set_to_none=True)
        lossf = loss.item() * gradient_accumulation_steps
        losses.append(lossf)
        iter_num += 1
        if iter_num >= max_iters:
            break
    return losses


@torch.no_grad()
def estimate_loss(model, eval_iters=2):
    out = {}
    model.eval()
    rng = np.random.default_rng(0)
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split, rng)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def run(model):
    losses = estimate_loss(model)
    start = torch.tensor([encode("To be")], dtype=torch.long)
    # top_k=1: greedy, the same tokens whatever the generator
    greedy = model.generate(start, max_new_tokens=20, top_k=1)
    return {"train_loss": losses['train'], "val_loss": losses['val'], "greedy": greedy,
            "text_len": len(decode(greedy[0].tolist())), "vocab_size": vocab_size}
