"""The models a plan's stages are cut from, and their data.

Every model stage is built from a seed of its own, so the copies of a stage
in two processes (or two pipeline replicas) start equal; microbatch m's
data comes from a seed of its own, so every process that needs it makes the
same. All in float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

import torch
from torch import nn

MODELS = ("mlp", "transformer")

HIDDEN = 8
MICROBATCH_SIZE = 2
SEQUENCE = 4
LEARNING_RATE = 0.1


@dataclass(frozen=True)
class ModelSpec:
    """Which model, and the shape of what flows between its stages."""
    name: str

    def activation_shape(self) -> Tuple[int, ...]:
        if self.name == "transformer":
            return (MICROBATCH_SIZE, SEQUENCE, HIDDEN)
        return (MICROBATCH_SIZE, HIDDEN)


class MlpStage(nn.Module):
    """Two linear layers with a tanh between and after them."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(HIDDEN, HIDDEN)
        self.second = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.second(torch.tanh(self.first(x))))


class TransformerStage(nn.Module):
    """A pre-norm transformer block: one attention head and an MLP, each in
    a residual."""

    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.norm2 = nn.LayerNorm(HIDDEN)
        self.up = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.down = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / HIDDEN ** 0.5
        x = x + self.proj(torch.softmax(scores, dim=-1) @ v)
        return x + self.down(torch.tanh(self.up(self.norm2(x))))


def make_stage(spec: ModelSpec, model_stage: int) -> nn.Module:
    """Model stage `model_stage`, initialised from its own seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1000 + model_stage)
        stage = MlpStage() if spec.name == "mlp" else TransformerStage()
        # LayerNorm starts at ones and zeros; perturb it so that its
        # gradients are not symmetric.
        for p in stage.parameters():
            p.data.add_(0.1 * torch.randn_like(p))
    return stage.double()


def microbatch(spec: ModelSpec, index: int) -> Tuple[torch.Tensor,
                                                     torch.Tensor]:
    """Input and target of global microbatch `index`."""
    gen = torch.Generator().manual_seed(5000 + index)
    shape = spec.activation_shape()
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    target = torch.randn(shape, generator=gen, dtype=torch.float64)
    return x, target


def loss_fn(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return ((output - target) ** 2).mean()


# A global-batch auxiliary loss at a stage, shaped like MoE load balancing:
# AUX_WEIGHT x the squared norm of the stage output's mean over every token
# of the step. Its gradient for one microbatch depends on every
# microbatch's output, so it is right only when every forward reached the
# stage before any backward leaves it.
AUX_WEIGHT = 0.5


def aux_statistic(output: torch.Tensor) -> torch.Tensor:
    """A microbatch's contribution: the mean of its output's rows."""
    return output.reshape(-1, HIDDEN).mean(0)


def aux_loss(mean: torch.Tensor) -> torch.Tensor:
    return AUX_WEIGHT * (mean ** 2).sum()
