"""The GPU benchmark's models: sizes, losses and inputs, shared by
bench/gpu/prepare (which builds them as ONNX for lethec) and bench/gpu/run.py
(which builds the same architectures in PyTorch, bench/gpu/torch_models.py).

Plain Python: importing it needs neither onnx nor torch, so run.py can read
it on a machine without onnx and prepare on one without torch.
"""

import os
import sys
import tarfile

# The four models, in the order of the tables.
MODELS = ["mlp", "resnet50", "gpt2", "unet"]

# Each model's dimensions but the batch (the keyword arguments of its
# builder in python/lethe/onnx_models.py, and of torch_models.build).
# "gpu" is the benchmark; "tiny" the same graphs, small enough to run the
# whole flow on a CPU in a minute.
SIZES = {
    "gpu": {
        "mlp": dict(features=512, hidden=1024, depth=8, classes=1000),
        "resnet50": dict(image=224, classes=1000, width=64),
        "gpt2": dict(sequence=1024, model_dim=768, heads=12, layers=12, vocab=50257),
        "unet": dict(channels=3, base=64, image=256, depth=4, convs=2),
    },
    "tiny": {
        "mlp": dict(features=32, hidden=64, depth=4, classes=10),
        "resnet50": dict(image=32, classes=10, width=8),
        "gpt2": dict(sequence=16, model_dim=32, heads=4, layers=2, vocab=64),
        "unet": dict(channels=3, base=4, image=32, depth=3, convs=2),
    },
}

# The two batches whose unplanned arenas give the line that
# bench/gpu/prepare solves for the benchmark batch (large enough that the
# activations, not the 256-byte alignment, make the difference).
PROBE_BATCHES = {
    "gpu": {"mlp": (256, 2048), "resnet50": (1, 4), "gpt2": (1, 2), "unet": (1, 4)},
    "tiny": {"mlp": (16, 128), "resnet50": (2, 8), "gpt2": (2, 8), "unet": (2, 8)},
}

# The model output the loss reads, and the loss (lethec --loss; PyTorch's
# cross_entropy or mse_loss, both averaged over the batch).
LOSSES = {
    "mlp": ("logits", "softmax_cross_entropy"),
    "resnet50": ("logits", "softmax_cross_entropy"),
    "gpt2": ("logits", "softmax_cross_entropy"),
    "unet": ("y", "mse"),
}

# lethec --optimizer; PyTorch's torch.optim.Adam with the same learning rate.
OPTIMIZER = "kind=adam lr=0.001"
LEARNING_RATE = 0.001

# What one checkpointed block is, for the tables.
BLOCKS = {
    "mlp": "Linear + ReLU",
    "resnet50": "bottleneck",
    "gpt2": "transformer block",
    "unet": "stage (convolutions of one level)",
}


def describe(name, size):
    """One line naming the model and its dimensions."""
    dims = ", ".join(f"{key} {value}" for key, value in size.items())
    return f"{name} ({dims})"


def token_vocabulary(name, size):
    """The number of token ids when the model reads tokens (int64 indices
    into an embedding, drawn below it), else None."""
    return size["vocab"] if name == "gpt2" else None


def onnx_model(name, batch, size):
    """The model as an onnx.ModelProto at `batch` (needs python/ on the path
    and onnx)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "python"))
    from lethe import onnx_models

    if name == "resnet50":
        return onnx_models.resnet50(batch=batch, training=True, **size)
    return getattr(onnx_models, name)(batch=batch, **size)


def extract_archive(path, folder):
    """Unpacks the tar archive `path` into `folder` (only plain files and
    folders inside it, where Python can say so)."""
    with tarfile.open(path) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(folder, filter="data")
        else:
            tar.extractall(folder)
