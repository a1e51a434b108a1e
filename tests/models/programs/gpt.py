"""A GPT in the style of nanoGPT and minGPT: causal self-attention (through
F.scaled_dot_product_attention when torch has it, a masked softmax otherwise), GELU MLPs,
weight tying, GPT-2's initialisation, and a generate() that samples with temperature and
top-k under @torch.no_grad(). fit(model) trains it as the "Let's build GPT" lecture's
gpt.py does (karpathy/ng-video-lecture: get_batch, estimate_loss every eval_interval,
AdamW on model.parameters(), zero_grad(set_to_none=True)), with a CosineAnnealingLR added
and get_batch's offsets drawn with NumPy (not torch.randint) so that both frameworks see
the same batches, on a seeded token stream made here. Its dropout is 0.0 (GPTConfig), so
that training draws nothing from the framework's generator."""
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = 65
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


def build():
    torch.manual_seed(1337)
    model = GPT(GPTConfig())
    model.eval()
    return model


def run(model):
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    rng = np.random.default_rng(3)
    idx = torch.tensor(rng.integers(0, 65, size=(2, 24)), dtype=torch.long, device=device)
    targets = torch.tensor(rng.integers(0, 65, size=(2, 24)), dtype=torch.long)
    targets[0, :3] = -1  # ignored positions
    with torch.no_grad():
        logits, loss = model(idx, targets)
        last_logits, none = model(idx)
    # top_k=1 makes sampling greedy, so the tokens are the same whatever the generator.
    greedy = model.generate(idx[:, :4], max_new_tokens=30, top_k=1)
    sampled = model.generate(idx[:, :4], max_new_tokens=8, temperature=0.8, top_k=10)
    in_range = bool(((sampled >= 0) & (sampled < 65)).all())
    return {"logits": logits, "loss": loss.item(), "last_logits": last_logits,
            "no_loss": none is None, "greedy": greedy, "sampled_shape": tuple(sampled.shape),
            "sampled_in_range": in_range, "params": model.get_num_params()}


# -----------------------------------------------------------------------------
# training, in the style of ng-video-lecture's gpt.py
batch_size = 8
block_size = 24
max_iters = 12
eval_interval = 6
learning_rate = 1e-3
eval_iters = 2


def make_tokens(n=4096, seed=3):
    """A token stream with structure to learn: runs counting up by 7 (mod 65), restarted
    at random places."""
    rng = np.random.default_rng(seed)
    tokens = np.empty(n, dtype=np.int64)
    tokens[0] = 0
    for i in range(1, n):
        tokens[i] = rng.integers(0, 65) if rng.random() < 0.1 else (tokens[i - 1] + 7) % 65
    return tokens


data = make_tokens()
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]


def get_batch(split, rng):
    data = train_data if split == 'train' else val_data
    ix = rng.integers(0, len(data) - block_size, size=(batch_size,))
    x = torch.stack([torch.from_numpy(data[i:i + block_size]) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + block_size + 1]) for i in ix])
    return x, y


@torch.no_grad()
def estimate_loss(model, rng):
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split, rng)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


def fit(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_iters)
    rng = np.random.default_rng(0)
    eval_rng = np.random.default_rng(1)
    losses = []
    model.train()
    for iter in range(max_iters):
        # every once in a while evaluate the loss on train and val sets
        if iter % eval_interval == 0 or iter == max_iters - 1:
            estimate_loss(model, eval_rng)
        # sample a batch of data
        xb, yb = get_batch('train', rng)
        # evaluate the loss
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses
