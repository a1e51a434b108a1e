"""The programs that tests/python/test_compile.py compiles. They live in a file of their own
so that their code objects, globals and line numbers stay fixed: the skip reasons and the
Unsupported messages name this file, and the tests rebind its globals.

The models use only `nn`, `F` and Tensor methods, so that the test can run their source
with torch.nn bound to those names (the oracle). Keep them free of other globals."""
import pith
import pith.compiler
import pith.nn as nn
import pith.nn.functional as F

# ---- globals the tests rebind (monkeypatch restores them) --------------------------------

SCALE = 2.0
ACTIVATION = pith.relu
EVENTS = []
COUNTER = 0
BIAS = pith.zeros(3)


# ---- compilable functions ----------------------------------------------------------------

def affine(x):
    return x * 2 + 1


def scaled(x):
    return x * SCALE


def activated(x):
    return ACTIVATION(x) + 1


def rank_times(x):
    return x * len(x.shape)


def with_scalar(x, alpha):
    return x * alpha + alpha


def add(x, y):
    return x + y


def plus_default_ones(x):
    return x + pith.ones(x.shape[-1])


def signature_forms(a, b=2.0, /, c=3.0, *args, d, e=5.0, **kwargs):
    y = a * b + c
    for t in args:
        y = y + t
    y = y * d - e
    for value in kwargs.values():
        y = y * value
    return y


def mutates(x, y):
    x.add_(y)
    return x * y


def flat_view(x):
    return x.view(-1)


def noisy(x):
    return x + pith.randn(x.shape)


def plus_bias(x):
    return x + BIAS


def keyword_forms(a, b=2.0, /, c=3.0, *, d, e=5.0):
    return (a * b + c) * d - e


def make_closure(scale):
    offset = pith.ones(1)

    def closure(x):
        return x * scale + offset
    return closure


def make_adjustable():
    factor = 2.0

    def adjustable(x):
        return x * factor

    def set_factor(value):
        nonlocal factor
        factor = value
    return adjustable, set_factor


def uses_cell(x):
    total = x * 2

    def add_total(y):
        return y + total
    return add_total(x) - 1


# ---- code that falls back ----------------------------------------------------------------

def branch_on_tensor(x):
    if x.sum() > 0:  # falls back: bool(tensor)
        return x * 2
    return x - 1


def calls_item(x):
    return x * x.sum().item()  # falls back: .item()


def prints(x):
    print("before", x.shape[0])  # falls back: print
    y = x + 1
    print("after")
    return y


def appends(x):
    EVENTS.append("start")
    y = x * 3
    EVENTS.append("middle")
    z = y - x
    EVENTS.append("end")
    return z


def writes_global(x):
    global COUNTER
    COUNTER += 1
    return x + COUNTER


def interleaved(x):
    global COUNTER
    EVENTS.append("a")
    print("b")
    COUNTER += 1
    EVENTS.append(COUNTER)
    print("c", COUNTER)
    return x * COUNTER


def raises_value_error(x):
    y = x + 1
    if y.dim() > 0:
        raise ValueError("bad input")
    return y


class Recorder:
    """A context manager recording its enters and exits (with the exception type)."""

    def __init__(self):
        self.events = []

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.events.append(("exit", exc_type))
        return False


def inside_with(x, manager):
    with manager:
        y = x * 2
    return y + 1


def raises_inside_with(x, manager):
    with manager:
        y = x * 2
        raise ValueError(f"inside {y.dim()}")


# ---- generators and coroutines -----------------------------------------------------------

def counting(log):
    try:
        i = 0
        while True:
            try:
                got = yield i
                log.append(("got", got))
            except KeyError as e:
                log.append(("caught", e.args[0]))
            i += 1
    finally:
        log.append("closed")


def drives_generator(x):
    log = []
    g = counting(log)
    a = next(g)
    b = g.send("s")
    c = g.throw(KeyError("k"))
    g.close()
    return x * (a + b + c + 1), log


def resumes_generator(x, g):
    b = g.send("inside")
    c = g.throw(KeyError("k2"))
    g.close()
    return x + (b + c)


class Suspend:
    def __await__(self):
        got = yield "suspended"
        return got


async def waits(log):
    try:
        first = await Suspend()
        log.append(("resumed", first))
        second = await Suspend()
        log.append(("resumed", second))
    except KeyError as e:
        log.append(("caught", e.args[0]))
        return "caught"
    finally:
        log.append("finally")


async def coroutine_add(a, b):
    return a + b


def drives_coroutines(x):
    log = []
    c = waits(log)
    first = c.send(None)
    second = c.send("one")
    try:
        c.throw(KeyError("k"))
    except StopIteration as stop:
        log.append(("returned", stop.value))
    c2 = waits(log)
    c2.send(None)
    c2.close()
    c3 = coroutine_add(x, 1)
    try:
        c3.send(None)
    except StopIteration as stop:
        y = stop.value
    return y * len(log), log, first, second


# ---- recursion, the hook, threads ----------------------------------------------------------

def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)


def recurses(x):
    return x + depth(10**6)


def recurses_a_little(x):
    return x + depth(50)


def records_hook_state(x, seen):
    seen.append(pith.compiler.hook_installed())
    return x + 1


def calls_compiled(x, inner, seen):
    seen.append(pith.compiler.hook_installed())
    y = inner(x, seen)
    seen.append(pith.compiler.hook_installed())
    return y * 2


def plain(n):
    return n + 1


def thread_calls(n):
    total = 0
    for _ in range(n):
        total = plain(total)
    return total


def waits_for_thread(x, go, finished):
    go.release()
    finished.acquire()
    return x + 1


# ---- modules -----------------------------------------------------------------------------

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x).relu()


class Scaled(nn.Module):
    """A Python constant and a flag read in forward, and a buffer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.gain = 2.0
        self.shift = False
        self.register_buffer("offset", pith.ones(4))

    def forward(self, x):
        y = self.fc(x) * self.gain + self.offset
        if self.shift:
            y = y - 1
        return y


class WithProperty(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.reads = 0

    @property
    def gain(self):
        self.reads += 1
        return 2.0

    def forward(self, x):
        return self.fc(x) * self.gain  # falls back: a property


class Counting(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.calls = 0

    def forward(self, x):
        self.calls += 1  # falls back: an attribute write
        return self.fc(x) + self.calls


class Strict(nn.Module):
    def __init__(self):
        super().__init__()
        self.strict = True

    def forward(self, x):
        if self.strict:
            raise ValueError("strict mode")
        return x + 1


class Chatty(nn.Module):
    """A forward that falls back (print) around two submodules."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        print("forward of Chatty")  # falls back: print
        return self.fc2(self.fc1(x).relu())


# ---- models (source also run with torch.nn as nn and torch.nn.functional as F) ----------

class MLP(nn.Module):
    def __init__(self, d_in=8, hidden=16, d_out=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        q = self.q(x).view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        weights = F.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).contiguous().view(batch, tokens, dim)
        return self.proj(out)


class Block(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim),
                                 nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        x = x + self.mlp(self.ln2(x))
        return x


class Classifier(nn.Module):
    def __init__(self, vocab=50, dim=16, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        h = self.embed(tokens)
        pooled = h.mean(dim=1)
        return self.head(self.norm(pooled))


class Stack(nn.Module):
    """A ModuleList iterated with for, with GELU from F."""

    def __init__(self, dim=8, depth=3):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            x = F.gelu(layer(x)) + x
        return x
