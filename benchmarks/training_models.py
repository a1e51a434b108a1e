"""The models and steps of benchmarks/training.py, written once for either library (pith or
torch, passed as `lib`): the MLP's SGD step and the nanoGPT-style model's AdamW step. Each
*_step function builds its state (seeded) and returns a closure that runs one step."""


def mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def sgd_step(lib, model, batch, compiled=False):
    """One SGD step at `batch`: zero_grad, forward, cross-entropy, backward, step."""
    F = lib.nn.functional
    lib.manual_seed(1)
    x, y = lib.randn(batch, 784), lib.randint(0, 10, (batch,))
    opt = lib.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    forward = lib.compile(model) if compiled else model

    def step():
        opt.zero_grad()
        F.cross_entropy(forward(x), y).backward()
        opt.step()
    return step


def nanogpt(lib, n_layer=4, n_embd=256, n_head=8, block_size=128, vocab=65):
    """nanoGPT's model.py layout (LayerNorm with bias, GELU MLP 4d, causal SDPA, learned
    positions, weight tying), dropout 0; written once for either library."""
    nn = lib.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.c_proj(y)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block_size, n_embd),
                h=nn.ModuleList([Block() for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    lib.manual_seed(0)
    return GPT()


def adamw_step(lib, batch=8, block_size=128, vocab=65):
    model = nanogpt(lib, block_size=block_size, vocab=vocab)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = lib.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                           {"params": no_decay, "weight_decay": 0.0}],
                          lr=6e-4, betas=(0.9, 0.95))
    lib.manual_seed(1)
    idx = lib.randint(0, vocab, (batch, block_size))
    targets = lib.randint(0, vocab, (batch, block_size))

    def step():
        opt.zero_grad(set_to_none=True)
        model(idx, targets).backward()
        opt.step()
    return step
