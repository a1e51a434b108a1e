"""In the style of PyTorch's "Quickstart" tutorial: a classifier over flattened 28x28
images, trained (its train() with SGD and CrossEntropyLoss), evaluated with a
DataLoader, saved and loaded. Synthetic data stands in for FashionMNIST (no downloads):
random images with random labels for the evaluation (run), and learnable ones (noisy
copies of ten prototypes) for the training (fit: the tutorial's epochs of train() and
test(), 2 epochs of 6 batches of 64, not 5 of 938, so lr 0.1, not 1e-3). Everything else
is the tutorial's usual code."""
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = (
    "cuda" if torch.cuda.is_available()
    else "mps" if torch.backends.mps.is_available()
    else "cpu"
)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.LeakyReLU(0.1),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def make_data():
    rng = np.random.default_rng(1)
    images = rng.random((96, 1, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, size=96)
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    return test_loss, correct


def make_training_data(n, seed):
    prototypes = np.random.default_rng(0).random((10, 1, 28, 28), dtype=np.float32)
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n)
    images = 0.5 * prototypes[labels] + 0.5 * rng.random((n, 1, 28, 28), dtype=np.float32)
    return TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))


def train(dataloader, model, loss_fn, optimizer, losses):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        # Compute prediction error
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        losses.append(loss.item())
        if batch % 100 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            assert current <= size


def fit(model):
    train_dataloader = DataLoader(make_training_data(6 * 64, 1), batch_size=64)
    test_dataloader = DataLoader(make_training_data(64, 2), batch_size=64)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    losses = []
    epochs = 2
    for t in range(epochs):
        train(train_dataloader, model, loss_fn, optimizer, losses)
        test(test_dataloader, model, loss_fn)
    return losses


def build():
    return NeuralNetwork().to(device)


def run(model):
    test_dataloader = DataLoader(make_data(), batch_size=32)
    loss_fn = nn.CrossEntropyLoss()
    loss, accuracy = test(test_dataloader, model, loss_fn)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pth")
        torch.save(model.state_dict(), path)
        reloaded = NeuralNetwork().to(device)
        reloaded.load_state_dict(torch.load(path, weights_only=True))
    reloaded.eval()
    x = test_dataloader.dataset[0][0]
    with torch.no_grad():
        pred = reloaded(x)
        probabilities = nn.Softmax(dim=1)(pred)
    return {"loss": loss, "accuracy": accuracy, "logits": pred,
            "probabilities": probabilities, "predicted": probabilities.argmax(1)}
