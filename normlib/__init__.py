"""normlib: the helper package of the book "Normalization, re-derived".

Pure numpy functions that normalize over the last axis, their exact O(d) backward
passes and explicit Jacobians, the claims ledger, the residual-stack model
(``normlib.stack``), attention logits in low precision (``normlib.attention``), and
invariance and timing helpers. Importing
normlib needs numpy alone: PyTorch, matplotlib and myst-nb are never imported at
import time (``plotting`` and ``book`` import them inside their functions).
"""

from . import attention, claims
from .deepnorm import deepnorm_constants
from .norms import (
    BatchNormResult,
    batch_norm,
    layer_norm,
    layer_norm_jacobian,
    layer_norm_stats,
    layer_norm_vjp,
    partial_rms_norm,
    rms_norm,
    rms_norm_jacobian,
    rms_norm_stats,
    rms_norm_vjp,
)
from .numerics import fd_jacobian, fd_vjp
from .stack import StackResult, simulate_stack

__all__ = [
    "attention",
    "claims",
    "deepnorm_constants",
    "BatchNormResult",
    "batch_norm",
    "layer_norm",
    "layer_norm_jacobian",
    "layer_norm_stats",
    "layer_norm_vjp",
    "partial_rms_norm",
    "rms_norm",
    "rms_norm_jacobian",
    "rms_norm_stats",
    "rms_norm_vjp",
    "fd_jacobian",
    "fd_vjp",
    "StackResult",
    "simulate_stack",
]

__version__ = "0.1.0"
