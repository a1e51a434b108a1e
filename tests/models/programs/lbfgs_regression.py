"""A regression fitted with L-BFGS and its strong-Wolfe line search, full batch, with a
closure, in the style of pytorch/examples' time_sequence_prediction/train.py ("use LBFGS as
optimizer since we can load the whole data to train": optim.LBFGS(..., lr=0.8), a
closure that zeroes the gradients, computes the MSE loss and calls backward(), and
optimizer.step(closure) once per STEP) and of the closure example in the torch.optim
documentation. The code is ours. The data is made here with NumPy: a smooth function of
three inputs plus a little noise; the model is a small MLP (time_sequence_prediction's
LSTMCells are not in pith yet), in float64 as time_sequence_prediction's (`seq.double()`,
double data): L-BFGS's line search and curvature pairs amplify rounding, and in float32
two frameworks' runs part after a few steps (0.1% at the 4th step here) for no fault of
either.
fit(model) returns the loss of every optimizer step: the value that step(closure)
returns, the loss before that step's iterations."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Regressor(nn.Module):
    def __init__(self):
        super(Regressor, self).__init__()
        self.hidden = nn.Linear(3, 32)
        self.out = nn.Linear(32, 1)

    def forward(self, input):
        return self.out(torch.tanh(self.hidden(input)))


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, size=(n, 3))
    y = np.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2] - 0.3 * x[:, 2] ** 2
    y = (y + 0.05 * rng.standard_normal(n))[:, None]
    return torch.from_numpy(x), torch.from_numpy(y)


STEPS = 10


def build():
    torch.manual_seed(0)
    model = Regressor()
    model.double()
    return model


def fit(model):
    input, target = make_data(256, 1)
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(model.parameters(), lr=0.8, max_iter=6, history_size=10,
                            line_search_fn="strong_wolfe")
    losses = []
    # begin to train
    for i in range(STEPS):
        def closure():
            optimizer.zero_grad()
            out = model(input)
            loss = criterion(out, target)
            loss.backward()
            return loss
        loss = optimizer.step(closure)
        losses.append(loss.item())
    return losses


def run(model):
    input, target = make_data(64, 2)
    with torch.no_grad():
        pred = model(input)
        loss = nn.MSELoss()(pred, target)
    return {"pred": pred, "loss": loss.item()}
