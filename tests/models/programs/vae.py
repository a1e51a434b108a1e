"""The variational autoencoder of pytorch/examples (vae/main.py), in its style: the
model, its loss (binary cross-entropy summed, plus the KL divergence), its train(epoch)
with Adam (lr 1e-3) and the evaluation loop over a DataLoader under torch.no_grad().
The code is ours, written after https://github.com/pytorch/examples/blob/main/vae/main.py.
Synthetic images in [0, 1] (noisy copies of ten prototypes) stand in for MNIST, and the
example's 10 epochs of 469 batches of 128 become 2 epochs of 6 (12 optimizer steps).
The reparameterisation draws noise (torch.randn_like in the example), and each framework's
generator draws different numbers: so that a training run can be compared with torch's,
train() draws the noise with NumPy, from a seeded generator, beside each batch, and
passes it to the model (forward's and reparameterize's `eps`, the one change to the
model; without it they draw as the example does). run() compares the evaluation: the
decoder on the means (the noise-free path), and the sampled path's shapes and finiteness.
fit(model) is the example's main loop: its epochs of train() and test()."""
import numpy as np
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar, eps=None):
        std = torch.exp(0.5 * logvar)
        if eps is None:
            eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x, eps=None):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar, eps)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def build():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return VAE().to(device)


def run(model):
    device = torch.device("cpu")
    rng = np.random.default_rng(5)
    images = torch.from_numpy(rng.random((40, 1, 28, 28), dtype=np.float32))
    labels = torch.zeros(40, dtype=torch.long)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(images, labels), batch_size=16, shuffle=False)
    model.eval()
    test_loss = 0
    sampled_ok = True
    means = []
    with torch.no_grad():
        for i, (data, _) in enumerate(test_loader):
            data = data.to(device)
            recon_batch, mu, logvar = model(data)
            sampled_ok &= recon_batch.shape == (data.shape[0], 784)
            sampled_ok &= bool(torch.isfinite(loss_function(recon_batch, data, mu, logvar)))
            mean_recon = model.decode(mu)
            test_loss += loss_function(mean_recon, data, mu, logvar).item()
            means.append(mean_recon)
        sample = torch.randn(8, 20).to(device)
        sample = model.decode(sample).cpu()
    test_loss /= len(test_loader.dataset)
    return {"test_loss": test_loss, "reconstructions": torch.cat(means),
            "sampled_ok": sampled_ok, "sample_shape": tuple(sample.view(8, 1, 28, 28).shape)}


def synthetic_images(n, seed):
    """n images of 28x28 in [0, 1]: noisy copies of ten fixed prototypes."""
    prototypes = np.random.default_rng(0).random((10, 28, 28)) > 0.7
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n)
    images = (0.7 * prototypes[labels] + 0.3 * rng.random((n, 28, 28))).astype(np.float32)
    return torch.from_numpy(images[:, None]), torch.from_numpy(labels)


def fit(model):
    device = torch.device("cpu")
    batch_size, epochs, log_interval = 128, 2, 10
    train_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_images(6 * batch_size, 1)),
        batch_size=batch_size, shuffle=False)
    test_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(*synthetic_images(64, 2)),
        batch_size=batch_size, shuffle=False)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    noise = np.random.default_rng(1)  # the reparameterisation's noise (see the docstring)
    losses = []

    def train(epoch):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            data = data.to(device)
            eps = torch.from_numpy(noise.standard_normal((len(data), 20)).astype(np.float32))
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data, eps)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            losses.append(loss.item())
            if batch_idx % log_interval == 0:
                pass  # the example prints loss.item() / len(data) here
        return train_loss / len(train_loader.dataset)

    def test(epoch):
        model.eval()
        test_loss = 0
        with torch.no_grad():
            for i, (data, _) in enumerate(test_loader):
                data = data.to(device)
                eps = torch.from_numpy(noise.standard_normal((len(data), 20))
                                       .astype(np.float32))
                recon_batch, mu, logvar = model(data, eps)
                test_loss += loss_function(recon_batch, data, mu, logvar).item()
        return test_loss / len(test_loader.dataset)

    for epoch in range(1, epochs + 1):
        train(epoch)
        test(epoch)
    return losses
