#!/usr/bin/env python3
"""Exports the PyTorch fixtures of the importer's tests.

Each model is exported with torch.onnx.export at opset 17 (weights seeded, so
a re-export gives the same files) into DIR/NAME/model.onnx, with an input and
PyTorch's own output in DIR/NAME/test_data_set_0/{input_0,output_0}.pb, the
layout of ONNX's conformance data. The committed files are what the lit test
torch.test runs through lethe-translate and lethe-run; this script needs
Debian's python3-torch only to regenerate them:

    /usr/bin/python3 test/Target/ONNX/torch/export.py test/Target/ONNX/torch
"""

import argparse
import os

import onnx
import onnx.numpy_helper
import torch
from torch import nn


class Mlp(nn.Module):
    """Linear, exact GELU (exported with Erf), Linear, LogSoftmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return torch.log_softmax(self.fc2(nn.functional.gelu(self.fc1(x))), 1)


class Cnn(nn.Module):
    """Conv, BatchNorm (inference), ReLU, MaxPool, strided Conv, global
    average pooling, Flatten, Linear: a small image classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.conv2(x))
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class Attention(nn.Module):
    """A pre-norm transformer block: LayerNorm, two-head self-attention with
    a scaled softmax, residual, LayerNorm, a GELU feed-forward, residual."""

    def __init__(self, width=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.ff1 = nn.Linear(width, 2 * width)
        self.ff2 = nn.Linear(2 * width, width)

    def forward(self, x):
        batch, tokens, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)

        def split(t):
            return t.reshape(batch, tokens, self.heads,
                             width // self.heads).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-2, -1) / (width // self.heads) ** 0.5
        attended = (torch.softmax(scores, -1) @ v).transpose(1, 2)
        x = x + self.proj(attended.reshape(batch, tokens, width))
        return x + self.ff2(nn.functional.gelu(self.ff1(self.norm2(x))))


class UpBlock(nn.Module):
    """A U-Net decoder step: bilinear upsampling (Resize, linear), a
    transposed convolution, a skip connection by Concat, Conv, Sigmoid."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.conv = nn.Conv2d(8, 2, 3, padding=1)

    def forward(self, x):
        resized = nn.functional.interpolate(x, scale_factor=2,
                                            mode="bilinear",
                                            align_corners=False)
        merged = torch.cat([resized, self.up(x)], dim=1)
        return torch.sigmoid(self.conv(merged))


MODELS = {
    "mlp": (Mlp, (4, 16)),
    "cnn": (Cnn, (2, 3, 16, 16)),
    "attention": (Attention, (2, 5, 16)),
    "upblock": (UpBlock, (1, 4, 6, 6)),
}


def write_tensor(array, path):
    with open(path, "wb") as file:
        file.write(onnx.numpy_helper.from_array(array).SerializeToString())


def export(name, directory):
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    # Give BatchNorm running statistics that are not the identity.
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x)
    target = os.path.join(directory, name)
    data = os.path.join(target, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    torch.onnx.export(model, (x,), os.path.join(target, "model.onnx"),
                      opset_version=17, input_names=["x"],
                      output_names=["y"], do_constant_folding=True)
    write_tensor(x.numpy(), os.path.join(data, "input_0.pb"))
    write_tensor(y.numpy(), os.path.join(data, "output_0.pb"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--model", choices=sorted(MODELS), action="append")
    args = parser.parse_args()
    for name in args.model or sorted(MODELS):
        export(name, args.directory)
        print(f"exported {name}")


if __name__ == "__main__":
    main()
