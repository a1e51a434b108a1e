"""In the style of PyTorch's "Datasets & DataLoaders" tutorial: a map-style Dataset
written by hand, an IterableDataset, random_split with a seeded generator, DataLoaders
with batching, shuffling, drop_last and a custom collate_fn, and a model applied to each
batch. Shuffled orders come from each framework's own generator, so what is compared is
what does not depend on the order (totals, sizes, the set of indices seen) and, exactly,
everything that is not shuffled. fit(model) trains the model over a DataLoader with the
custom collate_fn, in order (not shuffled, for the same reason), with Adagrad and
ReduceLROnPlateau stepped on each epoch's mean loss."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, IterableDataset, Subset, random_split


class PointsDataset(Dataset):
    def __init__(self, n):
        rng = np.random.default_rng(11)
        self.points = rng.standard_normal((n, 4)).astype(np.float32)
        self.labels = (self.points.sum(axis=1) > 0).astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return {"x": torch.from_numpy(self.points[idx]), "y": int(self.labels[idx]),
                "index": idx}


class Countdown(IterableDataset):
    def __init__(self, start):
        self.start = start

    def __iter__(self):
        return iter(range(self.start, 0, -1))


def pad_collate(batch):
    xs = torch.stack([item["x"] for item in batch])
    ys = torch.tensor([item["y"] for item in batch])
    return xs, ys


def build():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def run(model):
    dataset = PointsDataset(50)
    train, val = random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
    model.eval()
    results = {"split_sizes": (len(train), len(val))}

    ordered = DataLoader(dataset, batch_size=8)
    outs = []
    with torch.no_grad():
        for batch in ordered:
            outs.append(model(batch["x"]))
            assert isinstance(batch["y"], torch.Tensor) and batch["y"].dtype == torch.int64
    results["ordered_logits"] = torch.cat(outs)
    results["ordered_batches"] = len(ordered)

    shuffled = DataLoader(train, batch_size=7, shuffle=True, drop_last=True,
                          generator=torch.Generator().manual_seed(0))
    seen = []
    for batch in shuffled:
        seen.extend(batch["index"].tolist())
    results["shuffled_batches"] = len(shuffled)
    results["shuffled_count"] = len(seen)
    results["shuffled_unique"] = len(set(seen)) == len(seen)
    results["shuffled_in_train"] = set(seen) <= set(train.indices)

    every_fifth = Subset(dataset, list(range(0, 50, 5)))
    custom = DataLoader(every_fifth, batch_size=4, collate_fn=pad_collate)
    correct = 0
    with torch.no_grad():
        for xs, ys in custom:
            correct += (model(xs).argmax(dim=1) == ys).sum().item()
    results["val_correct"] = correct

    results["countdown"] = [b.tolist() for b in DataLoader(Countdown(7), batch_size=3)]
    return results


def fit(model):
    dataset = PointsDataset(48)
    loader = DataLoader(Subset(dataset, list(range(48))), batch_size=8, collate_fn=pad_collate)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=0)
    losses = []
    for epoch in range(2):
        model.train()
        epoch_loss = 0.0
        for xs, ys in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xs), ys)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            epoch_loss += loss.item()
        scheduler.step(epoch_loss / len(loader))
    return losses
