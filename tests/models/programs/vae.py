"""The variational autoencoder of pytorch/examples (vae/main.py), in its style: the
model, its loss (binary cross-entropy summed, plus the KL divergence), and the
evaluation loop over a DataLoader under torch.no_grad(). Synthetic images in [0, 1]
stand in for MNIST. The reparameterisation draws noise, which differs between
frameworks, so the comparison runs the decoder on the means (the noise-free path) and
checks the sampled path's shapes and finiteness."""
import numpy as np
import torch
import torch.utils.data
from torch import nn
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

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
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
