"""The GPU benchmark's models in PyTorch: the architectures of
python/lethe/onnx_models.py's builders (same layers, shapes and FLOPs; the
weights are PyTorch's own initialization), for the eager and the
checkpoint-per-block baselines.

Parameter names follow the ONNX initializers' (an nn.Linear holds the
transpose of a MatMul weight; an embedding's table is NAME.weight), so that
a test can load the ONNX weights and compare outputs with Lethe's
interpreter. Runs on PyTorch 1.13 (Debian's, CPU) and 2.x.

    model = build("resnet50", image=224, classes=1000, width=64)
    inputs = make_inputs("resnet50", model.size, batch, device)
    loss = model.loss(*inputs, checkpoint=True)
"""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint as checkpoint_function


def run_block(block, checkpoint, *args):
    """block(*args), recomputed in the backward pass when `checkpoint`."""
    if checkpoint:
        return checkpoint_function(block, *args, use_reentrant=False)
    return block(*args)


class MLP(nn.Module):
    """depth x (Linear + ReLU), then a Linear head: lethe.onnx_models.mlp."""

    def __init__(self, features, hidden, depth, classes):
        super().__init__()
        self.layers = []
        width = features
        for layer in range(depth):
            self.add_module(f"fc{layer}", nn.Linear(width, hidden))
            self.layers.append(nn.Sequential(getattr(self, f"fc{layer}"), nn.ReLU()))
            width = hidden
        self.head = nn.Linear(width, classes)

    def forward(self, x, checkpoint=False):
        for layer in self.layers:
            x = run_block(layer, checkpoint, x)
        return self.head(x)

    def loss(self, x, labels, checkpoint=False):
        return F.cross_entropy(self(x, checkpoint), labels)


class ConvBN(nn.Module):
    """Conv (no bias) + BatchNorm: onnx_models.conv_bn with weight=PREFIX.weight."""

    def __init__(self, cin, cout, kernel, stride):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(cout, cin, kernel, kernel))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.stride = stride
        self.bn = nn.BatchNorm2d(cout, eps=1e-5)

    def forward(self, x):
        pad = self.weight.shape[-1] // 2
        return self.bn(F.conv2d(x, self.weight, stride=self.stride, padding=pad))


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride, downsample):
        super().__init__()
        self.conv1 = ConvBN(cin, width, 1, 1)
        self.conv2 = ConvBN(width, width, 3, stride)
        self.conv3 = ConvBN(width, 4 * width, 1, 1)
        self.downsample = ConvBN(cin, 4 * width, 1, stride) if downsample else None

    def forward(self, x):
        r = F.relu(self.conv1(x))
        r = F.relu(self.conv2(r))
        r = self.conv3(r)
        identity = self.downsample(x) if self.downsample is not None else x
        return F.relu(identity + r)


class ResNet50(nn.Module):
    """lethe.onnx_models.resnet50 with training-mode batch normalization."""

    BLOCKS = [3, 4, 6, 3]

    def __init__(self, image, classes, width):
        super().__init__()
        self.conv1 = ConvBN(3, width, 7, 2)
        self.blocks = []
        cin = width
        for stage, count in enumerate(self.BLOCKS):
            stage_width = width * 2 ** stage
            layer = nn.Sequential(*[
                Bottleneck(cin if block == 0 else 4 * stage_width, stage_width,
                           2 if block == 0 and stage > 0 else 1, block == 0)
                for block in range(count)])
            self.add_module(f"layer{stage + 1}", layer)
            self.blocks.extend(layer)
            cin = 4 * stage_width
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, checkpoint=False):
        y = F.relu(self.conv1(x))
        y = F.max_pool2d(y, kernel_size=3, stride=2, padding=1)
        for block in self.blocks:
            y = run_block(block, checkpoint, y)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))

    def loss(self, x, labels, checkpoint=False):
        return F.cross_entropy(self(x, checkpoint), labels)


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)


class TransformerBlock(nn.Module):
    """onnx_models.transformer_block: pre-LayerNorm attention (scores scaled,
    the additive mask added, softmax; the explicit product, as the ONNX graph
    computes it, not a fused attention kernel) and a GELU feed-forward."""

    def __init__(self, dim, heads, ff_dim):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim, eps=1e-5)
        self.attn = Attention(dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-5)
        self.ff = nn.ModuleDict({"in": nn.Linear(dim, ff_dim), "out": nn.Linear(ff_dim, dim)})

    def forward(self, x, mask):
        batch, sequence, dim = x.shape
        head_dim = dim // self.heads

        def split_heads(y):
            return y.view(batch, sequence, self.heads, head_dim).transpose(1, 2)

        h = self.ln1(x)
        q = split_heads(self.attn.q(h))
        k = split_heads(self.attn.k(h))
        v = split_heads(self.attn.v(h))
        scores = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(head_dim)) + mask
        context = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, sequence, dim)
        x = x + self.attn.out(context)
        return x + self.ff["out"](F.gelu(self.ff["in"](self.ln2(x))))


class GPT2(nn.Module):
    """lethe.onnx_models.gpt2: embeddings, causal blocks, a final LayerNorm
    and the head tied to the token embedding."""

    def __init__(self, sequence, model_dim, heads, layers, vocab):
        super().__init__()
        self.wte = nn.Embedding(vocab, model_dim)
        self.wpe = nn.Embedding(sequence, model_dim)
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.01)
        self.blocks = []
        for layer in range(layers):
            self.add_module(f"h{layer}", TransformerBlock(model_dim, heads, 4 * model_dim))
            self.blocks.append(getattr(self, f"h{layer}"))
        self.ln_f = nn.LayerNorm(model_dim, eps=1e-5)
        mask = torch.triu(torch.full((sequence, sequence), -1e9), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, tokens, checkpoint=False):
        x = self.wte(tokens) + self.wpe.weight
        for block in self.blocks:
            x = run_block(block, checkpoint, x, self.mask)
        x = self.ln_f(x)
        return F.linear(x.reshape(-1, x.shape[-1]), self.wte.weight)

    def loss(self, tokens, labels, checkpoint=False):
        return F.cross_entropy(self(tokens, checkpoint), labels)


class Stage(nn.ModuleList):
    """`convs` x (3x3 Conv with bias + ReLU): one level of the U-Net, its
    convolutions named 0, 1, ... as the ONNX weights are."""

    def __init__(self, cin, cout, convs):
        super().__init__(
            [nn.Conv2d(cin if index == 0 else cout, cout, 3, padding=1) for index in range(convs)])

    def forward(self, x):
        for conv in self:
            x = F.relu(conv(x))
        return x


class UNet(nn.Module):
    """lethe.onnx_models.unet: `depth` levels down (MaxPool), a bottleneck,
    `depth` levels up (nearest upsampling, the skip concatenated after it), a
    1x1 head without bias. The weights' names are the ONNX ones for convs > 1
    (enc1.0.weight; with one convolution per stage ONNX names it enc1.weight)."""

    def __init__(self, channels, base, image, depth, convs):
        super().__init__()
        self.depth = depth
        width = channels
        for level in range(1, depth + 1):
            self.add_module(f"enc{level}", Stage(width, base * 2 ** (level - 1), convs))
            width = base * 2 ** (level - 1)
        self.mid = Stage(width, base * 2 ** depth, convs)
        width = base * 2 ** depth
        for level in range(depth, 0, -1):
            skip = base * 2 ** (level - 1)
            self.add_module(f"dec{level}", Stage(width + skip, skip, convs))
            width = skip
        self.head = nn.Conv2d(base, channels, 1, bias=False)

    def _stage(self, name):
        return getattr(self, name)

    def forward(self, x, checkpoint=False):
        skips = []
        y = x
        for level in range(1, self.depth + 1):
            if level > 1:
                y = F.max_pool2d(y, 2)
            y = run_block(self._stage(f"enc{level}"), checkpoint, y)
            skips.append(y)
        y = run_block(self.mid, checkpoint, F.max_pool2d(y, 2))
        for level in range(self.depth, 0, -1):
            up = F.interpolate(y, scale_factor=2, mode="nearest")
            y = run_block(self._stage(f"dec{level}"), checkpoint,
                          torch.cat([up, skips[level - 1]], dim=1))
        return self.head(y)

    def loss(self, x, target, checkpoint=False):
        return F.mse_loss(self(x, checkpoint), target)


CLASSES = {"mlp": MLP, "resnet50": ResNet50, "gpt2": GPT2, "unet": UNet}


def build(name, **size):
    """The model `name` (suite.MODELS) at the dimensions `size`."""
    model = CLASSES[name](**size)
    model.size = size
    return model


def make_inputs(name, size, batch, device, generator=None):
    """Random inputs and targets for one step at `batch`, on `device`."""
    options = dict(device=device, generator=generator)
    if name == "mlp":
        return (torch.rand(batch, size["features"], **options) * 2 - 1,
                torch.randint(0, size["classes"], (batch,), **options))
    if name == "resnet50":
        return (torch.rand(batch, 3, size["image"], size["image"], **options) * 2 - 1,
                torch.randint(0, size["classes"], (batch,), **options))
    if name == "gpt2":
        return (torch.randint(0, size["vocab"], (batch, size["sequence"]), **options),
                torch.randint(0, size["vocab"], (batch * size["sequence"],), **options))
    shape = (batch, size["channels"], size["image"], size["image"])
    return (torch.rand(*shape, **options) * 2 - 1, torch.rand(*shape, **options) * 2 - 1)
