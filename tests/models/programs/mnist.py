"""The MNIST example of pytorch/examples (mnist/main.py), in its style: Net, train(),
test(), Adadelta with lr=1.0 and StepLR(step_size=1, gamma=0.7) stepped once an epoch.
The code is ours, written after https://github.com/pytorch/examples/blob/main/mnist/main.py.
What differs from the example, each for a stated reason:
- the convolutions (and max_pool2d) are replaced, until pith has them, in ONE marked block
  below: the same convolution computed as a linear layer on 3x3 patches, with Conv2d's
  parameters, shapes and initialisation; undo the block and Net is the example's;
- synthetic 28x28 images (ten noisy prototypes, one per class, normalised with MNIST's
  mean and std as the example's transform does) stand in for MNIST: no downloads;
- the arguments are the example's defaults but three, to keep the run short: 2 epochs,
  batches of 8 (not 64) and 6 batches an epoch (12 optimizer steps);
- the run compared with torch sets the two Dropout layers to p=0.0 (build()): dropout draws
  its masks from each framework's own generator. The loader does not shuffle (the example
  shuffles only on CUDA).
fit(model) is the example's main() after the model is made: its epochs of train() and
test(), returning the loss of every optimizer step."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


# ==== BEGIN stand-in for the convolutions: pith has no nn.Conv2d / F.max_pool2d yet ====
# To undo: delete this block down to END and write `Conv2d, max_pool2d = nn.Conv2d,
# F.max_pool2d` (or nn.Conv2d and F.max_pool2d in Net, as the example has them).
class _Conv2dAsLinear(nn.Module):
    """nn.Conv2d(in_channels, out_channels, kernel_size, stride=1), padding 0, computed as a
    linear layer on the kernel_size x kernel_size patches of the input: Conv2d's parameters
    (weight (out, in, k, k), bias (out)) and initialisation, so the state_dict is a Conv2d's."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1):
        super().__init__()
        if stride != 1:
            raise ValueError("the stand-in computes stride 1 only")
        self.kernel_size = kernel_size
        self.weight = nn.Parameter(torch.empty(out_channels, in_channels, kernel_size,
                                               kernel_size))
        self.bias = nn.Parameter(torch.empty(out_channels))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(self.weight)
        bound = 1 / math.sqrt(fan_in)
        nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        k = self.kernel_size
        h, w = x.shape[2] - k + 1, x.shape[3] - k + 1
        # (N, C, k*k, h, w): patch element (c, i, j) in Conv2d's weight order
        patches = torch.stack([x[:, :, i:i + h, j:j + w] for i in range(k) for j in range(k)],
                              dim=2)
        patches = patches.flatten(1, 2).permute(0, 2, 3, 1)  # (N, h, w, C*k*k)
        return F.linear(patches, self.weight.flatten(1), self.bias).permute(0, 3, 1, 2)


def _max_pool2d(x, kernel_size):
    """F.max_pool2d(x, kernel_size) for sizes that divide the input's."""
    n, c, h, w = x.shape
    k = kernel_size
    return x.reshape(n, c, h // k, k, w // k, k).amax(dim=(3, 5))


Conv2d, max_pool2d = _Conv2dAsLinear, _max_pool2d
# ==== END stand-in for the convolutions ====


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = Conv2d(1, 32, 3, 1)
        self.conv2 = Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if batch_idx % args.log_interval == 0:
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    return test_loss, correct


def synthetic_mnist(n, seed):
    """n images of 28x28 in [0, 1]: a noisy copy of one of ten fixed prototypes (the class),
    normalised as the example's transforms.Normalize((0.1307,), (0.3081,)) does."""
    prototypes = np.random.default_rng(0).random((10, 28, 28)) > 0.7
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n)
    images = 0.6 * prototypes[labels] + 0.4 * rng.random((n, 28, 28))
    images = ((images - 0.1307) / 0.3081).astype(np.float32)[:, None]
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))


ARGS = argparse.Namespace(batch_size=8, test_batch_size=1000, epochs=2, lr=1.0, gamma=0.7,
                          no_cuda=True, dry_run=False, seed=1, log_interval=10)


def build():
    torch.manual_seed(ARGS.seed)
    model = Net()
    # The run compared with torch keeps dropout out: its masks come from each framework's
    # own generator (see the docstring).
    model.dropout1.p = model.dropout2.p = 0.0
    return model


def fit(model):
    args = ARGS
    device = torch.device("cpu")
    train_loader = DataLoader(synthetic_mnist(6 * args.batch_size, 1),
                              batch_size=args.batch_size)
    test_loader = DataLoader(synthetic_mnist(32, 2), batch_size=args.test_batch_size)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    losses = []
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        test(model, device, test_loader)
        scheduler.step()
    return losses


def run(model):
    test_loader = DataLoader(synthetic_mnist(32, 2), batch_size=ARGS.test_batch_size)
    test_loss, correct = test(model, torch.device("cpu"), test_loader)
    return {"test_loss": test_loss, "correct": correct}
