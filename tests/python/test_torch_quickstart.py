"""PyTorch's "Learn the Basics" quickstart loop with only the import changed, against PyTorch
1.13 (one torch_reference subprocess): an nn.Module subclass (Flatten, Sequential of
Linear/ReLU), CrossEntropyLoss, DataLoader over a TensorDataset, 2 epochs of SGD then 2 of Adam
(loss.backward, optimizer.step, optimizer.zero_grad), the no_grad test loop, and
torch.save(model.state_dict()) / model.load_state_dict(torch.load(...)). With PyTorch's initial
weights copied in, every batch loss, the test metrics and the final weights match PyTorch's."""
import numpy as np

import torch_reference

_RNG = np.random.default_rng(2024)
IMAGES = _RNG.standard_normal((48, 1, 6, 6)).astype(np.float32)
CLASSES = (IMAGES.reshape(48, -1)[:, :10].argmax(1) % 4).astype(np.int64)  # learnable labels

# The quickstart, as its text reads, for whichever torch runs it; `initial` is a state_dict to
# start from (None: the model's own initialisation, as PyTorch's side does).
QUICKSTART = '''
def quickstart(torch, images, classes, folder, initial=None):
    nn = torch.nn  # the quickstart's `from torch import nn` (either torch)
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

    training_data = TensorDataset(torch.tensor(images[:32]), torch.tensor(classes[:32]))
    test_data = TensorDataset(torch.tensor(images[32:]), torch.tensor(classes[32:]))
    train_dataloader = DataLoader(training_data, batch_size=8)
    test_dataloader = DataLoader(test_data, batch_size=8)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(6 * 6, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to("cpu")
    if initial is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in initial.items()})
    start = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    loss_fn = nn.CrossEntropyLoss()
    losses = []

    def train(dataloader, model, loss_fn, optimizer):
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())

    def test(dataloader, model, loss_fn):
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        return test_loss / len(dataloader), correct / len(dataloader.dataset)

    for optimizer in (torch.optim.SGD(model.parameters(), lr=0.1),
                      torch.optim.Adam(model.parameters(), lr=1e-2)):
        for epoch in range(2):
            train(train_dataloader, model, loss_fn, optimizer)
    metrics = test(test_dataloader, model, loss_fn)
    torch.save(model.state_dict(), folder + "/model.pth")
    restored = NeuralNetwork()
    restored.load_state_dict(torch.load(folder + "/model.pth"))
    with torch.no_grad():
        same = bool((restored(torch.tensor(images)) == model(torch.tensor(images))).all())
    final = {k: v.numpy() for k, v in model.state_dict().items()}
    return start, losses, metrics, same, final
'''
_SCOPE = {"np": np}
exec(QUICKSTART, _SCOPE)
quickstart = _SCOPE["quickstart"]


def test_quickstart_matches_pytorch(tmp_path):
    reference = torch_reference.run(QUICKSTART + """
import tempfile
torch.manual_seed(0)
with tempfile.TemporaryDirectory() as folder:
    start, losses, metrics, same, final = quickstart(torch, images, classes, folder)
for k, v in start.items():
    out["start." + k] = v
for k, v in final.items():
    out["final." + k] = v
out["losses"], out["metrics"], out["same"] = np.array(losses), list(metrics), same
out["keys"] = list(final)
""", images=IMAGES, classes=CLASSES)
    assert "error" not in reference, reference
    import gpuaccel.torch as torch  # the quickstart's only change: this import
    initial = {k: reference["start." + k] for k in reference["keys"]}
    start, losses, metrics, same, final = quickstart(torch, IMAGES, CLASSES, str(tmp_path),
                                                     initial)
    assert list(final) == reference["keys"]
    assert len(losses) == 16
    np.testing.assert_allclose(losses, reference["losses"], rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]  # it learned: a comparison of a model that stayed still is weak
    np.testing.assert_allclose(metrics, reference["metrics"], rtol=1e-4)
    for key, value in final.items():
        np.testing.assert_allclose(value, reference["final." + key], rtol=1e-4, atol=1e-5,
                                   err_msg=key)
    assert same and reference["same"]
