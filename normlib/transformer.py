"""A small decoder-style Transformer with a switch for where the LayerNorm sits (PyTorch).

The only module of normlib that imports torch (import it explicitly as
``normlib.transformer``; ``import normlib`` never loads torch). It holds

* :class:`TinyTransformer`: token + learned position embeddings, ``depth`` blocks of
  causal multi-head self-attention and a ReLU FFN (hidden width ``4 d``), an output
  head; the block reads like its equations (nanoGPT is the model):

  - ``"post"``:     ``x = LN(x + Attn(x));      x = LN(x + FFN(x))``
  - ``"pre"``:      ``x = x + Attn(LN(x));      x = x + FFN(LN(x))``, and a final LN
  - ``"deepnorm"``: ``x = LN(α x + Attn(x));    x = LN(α x + FFN(x))``, with DeepNet's
    decoder-only constants α = (2M)^(1/4), β = (8M)^(-1/4) for M = ``depth`` layers,
    β scaling the initial FFN, value and output projection weights (not Q and K);

* the seeded synthetic task (:func:`reversal_task`: reverse a sequence of symbols);
* :func:`train` (AdamW, optional linear warmup, cosine decay, optional clipping),
  recording the loss, the gradient norm and the largest attention logit per step;
* measurements at initialization: :func:`ffn_grad_norms` (Xiong et al.'s Figure 3),
  :func:`hidden_grad_norms`, and :func:`first_update_norm` (DeepNet's model update);
* for the initialization scale: :func:`ffn_grad_stats` (the gradients of Xiong et al.'s
  Figure 3 mini-batch by mini-batch, with an unbiased estimate of the expected gradient's
  norm) and :func:`set_normal_init` (every weight matrix rescaled to ``N(0, σ²)``, keeping
  the seeded draws);
* for reading a sweep of runs: :func:`initial_losses` (the untrained model's loss on a run's
  own training batches, the reference of an early loss rise) and :func:`majority_call`
  (a seed count read by a one-sided binomial test).

Randomness is passed in as a seed: every weight is drawn from
``numpy.random.default_rng(seed)``, parameter by parameter in registration order, so
the same seed gives the same raw draws for every placement (DeepNorm's weights are
Post-LN's times β) and the global torch generator is never used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._validate import check_choice, check_int, check_positive_real
from .deepnorm import deepnorm_constants

__all__ = [
    "PLACEMENTS",
    "INITS",
    "TinyTransformer",
    "TrainResult",
    "reversal_task",
    "ffn_grad_norms",
    "hidden_grad_norms",
    "first_update_norm",
    "UPDATE_GROUPS",
    "FirstUpdates",
    "first_update_sizes",
    "first_updates",
    "lr_schedule",
    "train",
    "train_grid",
    "train_grids",
    "submit_grids",
    "design_jobs",
    "worker_pool",
    "initial_losses",
    "majority_call",
    "set_normal_init",
    "FFNGradStats",
    "ffn_grad_stats",
    "linear_grad_stats",
    "init_model",
    "ffn_inputs",
    "init_profile",
    "init_profiles",
]

PLACEMENTS = ("post", "pre", "deepnorm")
INITS = ("xavier", "gpt2")
SEPARATOR = 0  # token 0 separates a sequence from its reversal; symbols are 1 .. vocab-1
_EVAL_SEED = (20_240_229, 2)  # the held-out batch every run is scored on (independent of the run's seed)


# ----------------------------------------------------------------------------- the model


class HeadRMSNorm(nn.Module):
    """RMSNorm over the head dimension (QK-Norm): ``g * x / sqrt(mean(x^2) + eps)``."""

    def __init__(self, head_dim: int, *, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(head_dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention; keeps the largest absolute logit of its last forward."""

    def __init__(self, width: int, heads: int, seq_len: int, qk_norm: bool):
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.q = nn.Linear(width, width, bias=False)
        self.k = nn.Linear(width, width, bias=False)
        self.v = nn.Linear(width, width, bias=False)
        self.o = nn.Linear(width, width, bias=False)
        self.q_norm = HeadRMSNorm(self.head_dim) if qk_norm else None
        self.k_norm = HeadRMSNorm(self.head_dim) if qk_norm else None
        self.register_buffer("causal", torch.ones(seq_len, seq_len, dtype=torch.bool).tril(), persistent=False)
        self.max_logit = None  # max |q.k/sqrt(d_h)| over heads and allowed positions, last forward
        self.min_entropy = None  # smallest per-head attention entropy (nats, mean over batch and queries), last forward

    def forward(self, x):
        B, T, C = x.shape
        split = lambda t: t.view(B, T, self.heads, self.head_dim).transpose(1, 2)  # noqa: E731  (B, H, T, d_h)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        if self.q_norm is not None:  # QK-Norm over the head dimension (no RoPE here: positions are learned)
            q, k = self.q_norm(q), self.k_norm(k)
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T, T)
        allowed = self.causal[:T, :T]
        self.max_logit = logits.detach().masked_fill(~allowed, 0.0).abs().amax()
        att = logits.masked_fill(~allowed, float("-inf")).softmax(dim=-1)
        entropy = -torch.special.xlogy(att.detach(), att.detach()).sum(-1)  # (B, H, T); masked keys have p = 0
        self.min_entropy = entropy.mean(dim=(0, 2)).amin()
        return self.o((att @ v).transpose(1, 2).reshape(B, T, C))


class FFN(nn.Module):
    """``W2 ReLU(W1 x)``, hidden width ``4 d``."""

    def __init__(self, width: int):
        super().__init__()
        self.w1 = nn.Linear(width, 4 * width, bias=False)
        self.w2 = nn.Linear(4 * width, width, bias=False)

    def forward(self, x):
        return self.w2(F.relu(self.w1(x)))


class Block(nn.Module):
    """One layer: an attention sublayer and an FFN sublayer, each with its LayerNorm."""

    def __init__(self, placement: str, width: int, heads: int, seq_len: int, qk_norm: bool, alpha: float):
        super().__init__()
        self.placement, self.alpha = placement, alpha
        self.ln1, self.attn = nn.LayerNorm(width), CausalSelfAttention(width, heads, seq_len, qk_norm)
        self.ln2, self.ffn = nn.LayerNorm(width), FFN(width)

    def forward(self, x):
        if self.placement == "pre":
            x = x + self.attn(self.ln1(x))
            return x + self.ffn(self.ln2(x))
        x = self.ln1(self.alpha * x + self.attn(x))  # post: alpha = 1; deepnorm: alpha = (2M)^(1/4)
        return self.ln2(self.alpha * x + self.ffn(x))


class TinyTransformer(nn.Module):
    """A decoder-only Transformer with the LayerNorm placement as a switch.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        Where the LayerNorm sits (see the module docstring); ``"pre"`` adds a final LN.
    depth : int
        Number of layers ``M`` (each: attention + FFN sublayer).
    width : int, keyword-only
        Model width ``d``; a multiple of ``heads``.
    heads : int, keyword-only
        Attention heads.
    vocab : int, keyword-only
        Vocabulary size (>= 3).
    seq_len : int, keyword-only
        Longest input sequence (the learned position table has this many rows).
    qk_norm : bool, keyword-only
        RMSNorm (gain initialized to 1, ε = 1e-6) over the head dimension of q and k.
    init : {"xavier", "gpt2"}, keyword-only
        ``"xavier"``: Xavier-normal projections (std sqrt(2/(fan_in + fan_out))),
        embeddings N(0, 1/2) each so the input has unit variance per coordinate (Xiong
        et al.'s setting). ``"gpt2"``: N(0, 0.02) for every weight and embedding, the
        residual projections (attention output, FFN W2) N(0, 0.02/sqrt(2 depth)).
        ``"deepnorm"`` needs ``"xavier"`` (DeepNet scales Xavier weights by β).
    seed : int, keyword-only
        Seed of ``numpy.random.default_rng`` that draws every weight.

    Attributes
    ----------
    alpha, beta : float
        DeepNorm's constants (1.0 for post and pre).

    Notes
    -----
    The placements are the equations of the chapter "A real Transformer"
    (``book/real-transformer.md``); DeepNorm's constants are explained in
    ``book/deepnorm.md``. LayerNorms have gain 1 and bias 0 at initialization;
    the linear maps have no bias.
    """

    def __init__(self, placement, depth, *, width=64, heads=4, vocab=16, seq_len=16, qk_norm=False, init="xavier", seed=0):
        super().__init__()
        placement = check_choice(placement, "placement", PLACEMENTS)
        init = check_choice(init, "init", INITS)
        depth = check_int(depth, "depth")
        width = check_int(width, "width")
        heads = check_int(heads, "heads")
        vocab = check_int(vocab, "vocab", 3)
        seq_len = check_int(seq_len, "seq_len")
        seed = check_int(seed, "seed", 0)
        if width % heads:
            raise ValueError(f"width must be a multiple of heads; got width={width}, heads={heads}")
        if not isinstance(qk_norm, (bool, np.bool_)):
            raise TypeError(f"qk_norm must be True or False; got {type(qk_norm).__name__} {qk_norm!r}")
        if placement == "deepnorm" and init != "xavier":
            raise ValueError("placement='deepnorm' scales a Xavier initialization by beta (DeepNet); use init='xavier'")
        self.placement, self.depth, self.width, self.heads = placement, depth, width, heads
        self.vocab, self.seq_len, self.qk_norm, self.init, self.seed = vocab, seq_len, bool(qk_norm), init, seed
        self.alpha, self.beta = deepnorm_constants("decoder", M=depth) if placement == "deepnorm" else (1.0, 1.0)

        with torch.device("meta"):  # no storage and no draws from torch's global generator; filled below
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(seq_len, width)
            self.blocks = nn.ModuleList(
                Block(placement, width, heads, seq_len, self.qk_norm, self.alpha) for _ in range(depth)
            )
            self.ln_f = nn.LayerNorm(width) if placement == "pre" else nn.Identity()
            self.head = nn.Linear(width, vocab, bias=False)
        self.to_empty(device="cpu")
        self._initialize(np.random.default_rng(seed))

    def _std(self, name: str, p: torch.Tensor) -> float:
        """The initial standard deviation of a drawn parameter."""
        if self.init == "gpt2":
            residual = name.endswith(("attn.o.weight", "ffn.w2.weight"))
            return 0.02 / math.sqrt(2 * self.depth) if residual else 0.02
        if name in ("tok.weight", "pos.weight"):
            return math.sqrt(0.5)
        fan_out, fan_in = p.shape
        std = math.sqrt(2.0 / (fan_in + fan_out))  # Xavier normal, gain 1
        if name.endswith(("attn.v.weight", "attn.o.weight", "ffn.w1.weight", "ffn.w2.weight")):
            std *= self.beta  # DeepNorm's beta (1 for post and pre); not on Q and K
        return std

    @torch.no_grad()
    def _initialize(self, rng: np.random.Generator) -> None:
        for block in self.blocks:
            block.attn.causal = torch.ones(self.seq_len, self.seq_len, dtype=torch.bool).tril()
        for name, p in self.named_parameters():
            if p.ndim == 1:  # LayerNorm and QK-Norm gains/biases: constants, no draws
                p.fill_(0.0 if name.endswith("bias") else 1.0)
                continue
            z = rng.standard_normal(tuple(p.shape))
            p.copy_(torch.from_numpy(z * self._std(name, p)))

    def features(self, tokens):
        """The final hidden states ``F(x)`` (after the final LN for pre), shape (B, T, d)."""
        T = tokens.shape[1]
        if T > self.seq_len:
            raise ValueError(f"tokens has {T} positions; this model reads at most seq_len={self.seq_len}")
        x = self.tok(tokens) + self.pos.weight[:T]
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x)

    def forward(self, tokens):
        """Logits over the vocabulary, shape (B, T, vocab)."""
        return self.head(self.features(tokens))

    def loss(self, tokens, mask=None):
        """Next-token cross-entropy: predict ``tokens[:, 1:]`` from ``tokens[:, :-1]``.

        ``mask`` (B, T-1) selects the scored positions (default: all); mean over them.
        """
        logits = self(tokens[:, :-1])
        nll = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")  # (B, T-1)
        if mask is None:
            return nll.mean()
        return (nll * mask).sum() / mask.sum()

    @property
    def max_logit(self) -> float:
        """Largest absolute attention logit over all layers and heads in the last forward pass."""
        values = [b.attn.max_logit for b in self.blocks if b.attn.max_logit is not None]
        if not values:
            raise RuntimeError("max_logit is defined after a forward pass")
        return float(torch.stack(values).max())


# ----------------------------------------------------------------------------- the task


def reversal_task(batch: int, *, seq_len: int = 16, vocab: int = 16, rng=None):
    """A batch of the reversal task: ``a_1 … a_n SEP a_n … a_1``.

    Parameters
    ----------
    batch : int
        Number of sequences.
    seq_len : int, keyword-only
        The model's input length, even; a sequence has ``n = seq_len / 2`` symbols and
        ``seq_len + 1`` tokens (input ``tokens[:, :-1]``, targets ``tokens[:, 1:]``).
    vocab : int, keyword-only
        Vocabulary size; token 0 is the separator, symbols are drawn uniformly from
        ``1 … vocab - 1``.
    rng : numpy.random.Generator or int
        The source of randomness (an int is a seed for ``numpy.random.default_rng``).

    Returns
    -------
    tokens : torch.LongTensor, shape (batch, seq_len + 1)
    mask : torch.BoolTensor, shape (batch, seq_len)
        True where the target is a symbol of the reversed half (the scored positions).

    Raises
    ------
    TypeError
        A non-integer count or a missing/invalid ``rng``.
    ValueError
        An odd ``seq_len``, ``vocab < 3`` or a count < 1.

    Notes
    -----
    A model that has learned nothing but the symbol frequencies scores
    ``ln(vocab - 1)`` on the scored positions (2.71 for vocab 16). Used in the chapter
    "A real Transformer" (``book/real-transformer.md``).
    """
    batch = check_int(batch, "batch")
    seq_len = check_int(seq_len, "seq_len", 2)
    vocab = check_int(vocab, "vocab", 3)
    if seq_len % 2:
        raise ValueError(f"seq_len must be even (n symbols, a separator, n reversed); got {seq_len}")
    if rng is None or isinstance(rng, bool):
        raise TypeError("rng must be a numpy.random.Generator or an integer seed")
    rng = np.random.default_rng(rng)
    n = seq_len // 2
    a = rng.integers(1, vocab, size=(batch, n))
    seq = np.concatenate([a, np.full((batch, 1), SEPARATOR), a[:, ::-1]], axis=1)
    mask = np.zeros((batch, seq_len), dtype=bool)
    mask[:, n:] = True  # targets tokens[:, n+1:] = the reversed symbols
    return torch.from_numpy(seq.astype(np.int64)), torch.from_numpy(mask)


# ----------------------------------------------------------------------------- measurements at initialization


def _check_model(model) -> None:
    if not isinstance(model, TinyTransformer):
        raise TypeError(f"model must be a normlib.transformer.TinyTransformer; got {type(model).__name__}")


def _check_tokens(tokens, model) -> None:
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.long or tokens.ndim != 2:
        raise TypeError("tokens must be a torch.LongTensor of shape (B, T)")
    if tokens.shape[1] < 2:
        raise ValueError(f"tokens needs at least 2 positions (inputs and next-token targets); got shape {tuple(tokens.shape)}")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= model.vocab):
        raise ValueError(f"tokens must lie in 0 … {model.vocab - 1}")


def ffn_grad_norms(model, tokens, mask=None) -> np.ndarray:
    """``‖∂loss/∂W2_l‖_F`` of every block's second FFN weight, for one loss on ``tokens``.

    Parameters
    ----------
    model : TinyTransformer
        The model (its parameters' ``.grad`` are left untouched).
    tokens : torch.LongTensor, shape (B, T)
        The loss is the next-token cross-entropy of :meth:`TinyTransformer.loss`.
    mask : torch.BoolTensor, shape (B, T - 1), optional
        Scored positions (default: all).

    Returns
    -------
    numpy.ndarray, shape (depth,)
        Frobenius norms, block 0 (next to the input) first.

    Raises
    ------
    TypeError
        Not a TinyTransformer, or tokens not a 2-D LongTensor.
    ValueError
        Fewer than 2 positions or tokens outside the vocabulary.

    Notes
    -----
    Xiong et al. (2020), Figure 3, plot this quantity at initialization for Post-LN and
    Pre-LN. See the chapter "A real Transformer" (``book/real-transformer.md``).
    """
    _check_model(model)
    _check_tokens(tokens, model)
    weights = [b.ffn.w2.weight for b in model.blocks]
    grads = torch.autograd.grad(model.loss(tokens, mask), weights)
    return np.array([float(torch.linalg.norm(g)) for g in grads])


def hidden_grad_norms(model, tokens, mask=None) -> np.ndarray:
    """``‖∂loss/∂x_l‖_F`` of the residual stream after the embedding (l = 0) and after each block.

    Parameters
    ----------
    model : TinyTransformer
        The model.
    tokens : torch.LongTensor, shape (B, T)
        As in :func:`ffn_grad_norms`.
    mask : torch.BoolTensor, shape (B, T - 1), optional
        Scored positions (default: all).

    Returns
    -------
    numpy.ndarray, shape (depth + 1,)
        Entry ``l`` is the norm of the gradient at the output of block ``l - 1``
        (entry 0: the embedding output), over the whole batch.

    Raises
    ------
    TypeError
        Not a TinyTransformer, or tokens not a 2-D LongTensor.
    ValueError
        Fewer than 2 positions or tokens outside the vocabulary.

    Notes
    -----
    The per-layer factor of this gradient is what Xiong et al.'s Appendix F estimates
    as :math:`(2/3)^{1/2}` per layer. See ``book/real-transformer.md``.
    """
    _check_model(model)
    _check_tokens(tokens, model)
    stream = []  # the input of block 0, then the output of every block
    hooks = [model.blocks[0].register_forward_pre_hook(lambda m, args: stream.append(args[0]))]
    hooks += [b.register_forward_hook(lambda m, args, out: stream.append(out)) for b in model.blocks]
    try:
        loss = model.loss(tokens, mask)
    finally:
        for h in hooks:
            h.remove()
    grads = torch.autograd.grad(loss, stream)
    return np.array([float(torch.linalg.norm(g)) for g in grads])


def first_update_norm(model, tokens, *, lr, optimizer="sgd", mask=None, params=None) -> float:
    """DeepNet's model update ``‖ΔF‖``: the change of the final hidden states after one step.

    Parameters
    ----------
    model : TinyTransformer
        The model at initialization; it is not modified (the step is taken on a copy).
    tokens : torch.LongTensor, shape (B, T)
        The batch of the step and of the measurement (F is evaluated on ``tokens[:, :-1]``).
    lr : float, keyword-only
        Learning rate η (> 0).
    optimizer : {"sgd", "adam"}, keyword-only
        Plain SGD (DeepNet's analysis) or the first step of Adam (``torch.optim.Adam``,
        whose bias-corrected first step is ``η g / (|g| + 1e-8)``).
    mask : torch.BoolTensor, shape (B, T - 1), optional
        Scored positions of the loss (default: all).
    params : callable, optional, keyword-only
        A predicate on parameter names (``model.named_parameters()``): only the
        parameters it accepts take the step (default: all). DeepNet's analysis covers
        the branch weights ``attn.v``, ``attn.o``, ``ffn.w1``, ``ffn.w2``.

    Returns
    -------
    float
        ``sqrt(mean over tokens of ‖F(x, θ*) − F(x, θ)‖²)``: the root-mean-square over
        the batch's positions of the per-token change of the ``d``-dimensional output.

    Raises
    ------
    TypeError
        Not a TinyTransformer, bad tokens, or a non-numeric ``lr``.
    ValueError
        ``lr <= 0``, an unknown optimizer, or a ``params`` predicate that selects nothing.

    Notes
    -----
    DeepNet (Wang et al., 2022), Theorem 4.2 bounds
    :math:`\\lVert\\Delta F\\rVert \\le \\sum_{i=1}^{2N}\\frac{\\sqrt{v_i^2+w_i^2}}{\\alpha}\\lVert\\theta_i^*-\\theta_i\\rVert`,
    which for SGD is :math:`O(\\eta N)` for Post-LN and :math:`\\Theta(\\eta)` for DeepNorm.
    See the chapter "DeepNorm" (``book/deepnorm.md``).
    """
    import copy

    _check_model(model)
    _check_tokens(tokens, model)
    lr = check_positive_real(lr, "lr")
    optimizer = check_choice(optimizer, "optimizer", ("sgd", "adam"))
    if params is not None and not callable(params):
        raise TypeError(f"params must be a predicate on parameter names (a callable); got {type(params).__name__}")
    stepped = copy.deepcopy(model)
    chosen = [p for name, p in stepped.named_parameters() if params is None or params(name)]
    if not chosen:
        raise ValueError("params selects no parameter of the model")
    opt = (torch.optim.SGD if optimizer == "sgd" else torch.optim.Adam)(chosen, lr=lr)
    opt.zero_grad(set_to_none=True)
    stepped.loss(tokens, mask).backward()
    opt.step()
    with torch.no_grad():
        inp = tokens[:, :-1]
        delta = stepped.features(inp) - model.features(inp)
    return float(delta.pow(2).sum(-1).mean().sqrt())


# ----------------------------------------------------------------------------- training


def lr_schedule(step: int, *, lr: float, warmup_steps: int, steps: int, decay: str = "cosine") -> float:
    """The learning rate of step ``step`` (0-based): linear warmup, then cosine decay to lr/10.

    Parameters
    ----------
    step : int
        Step index, ``0 … steps - 1``.
    lr : float, keyword-only
        Peak learning rate.
    warmup_steps : int, keyword-only
        Length of the linear warmup (0: none); step ``t < warmup_steps`` uses
        ``lr (t + 1) / warmup_steps``.
    steps : int, keyword-only
        Total number of steps.
    decay : {"cosine", "none"}, keyword-only
        After warmup: cosine from ``lr`` down to ``lr / 10`` at the last step, or constant.

    Returns
    -------
    float

    Notes
    -----
    The schedule of nanoGPT (warmup, cosine to a tenth). Used by :func:`train`; see
    ``book/real-transformer.md``.
    """
    decay = check_choice(decay, "decay", ("cosine", "none"))
    if step < warmup_steps:
        return lr * (step + 1) / warmup_steps
    if decay == "none" or steps - warmup_steps <= 1:
        return lr
    frac = (step - warmup_steps) / (steps - warmup_steps - 1)
    return lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


@dataclass(frozen=True, eq=False)
class TrainResult:
    """One training run: per-step records and the final held-out loss.

    ``loss``, ``grad_norm`` and ``max_logit`` are read-only float64 arrays of shape
    (steps,): the training-batch loss before the step's update, the global gradient
    norm before clipping, and the largest absolute attention logit of the step's forward pass;
    ``attn_entropy`` the smallest attention entropy (nats) of that pass over layers and
    heads (each head's entropy averaged over the batch and the query positions; a
    uniform causal head has ``mean_t ln(t + 1)``), and ``qk_gain`` the largest
    ``max|g_q|·max|g_k|`` over layers before the step's update (NaN without QK-Norm).
    After a non-finite loss or gradient the run stops and the remaining entries are NaN
    (``diverged`` is then True and ``final_loss`` NaN).
    """

    placement: str
    depth: int
    width: int
    lr: float
    warmup_steps: int
    steps: int
    seed: int
    init: str
    qk_norm: bool
    clip: float | None
    loss: np.ndarray
    grad_norm: np.ndarray
    max_logit: np.ndarray
    attn_entropy: np.ndarray
    qk_gain: np.ndarray
    lr_used: np.ndarray
    final_loss: float
    final_accuracy: float
    diverged: bool

    def __post_init__(self):
        for name in ("loss", "grad_norm", "max_logit", "attn_entropy", "qk_gain", "lr_used"):
            getattr(self, name).setflags(write=False)

    def __reduce__(self):  # rebuild through __init__, so the arrays stay read-only after pickling
        return (type(self), tuple(getattr(self, f) for f in self.__dataclass_fields__))


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    a.setflags(write=False)
    return a


_BETAS, _ADAM_EPS = (0.9, 0.98), 1e-8


def _check_run_options(steps, batch, eval_batch, decay, clip, weight_decay, seq_len):
    steps = check_int(steps, "steps")
    batch = check_int(batch, "batch")
    eval_batch = check_int(eval_batch, "eval_batch")
    decay = check_choice(decay, "decay", ("cosine", "none"))
    if clip is not None:
        clip = check_positive_real(clip, "clip")
    if isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float)) or not (
        math.isfinite(weight_decay) and weight_decay >= 0
    ):
        raise ValueError(f"weight_decay must be a finite number >= 0; got {weight_decay!r}")
    if check_int(seq_len, "seq_len", 2) % 2:
        raise ValueError(f"seq_len must be even (n symbols, a separator, n reversed); got {seq_len}")
    return steps, batch, eval_batch, decay, clip, float(weight_decay)


def _as_tuple(values, name, check):
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = (values,)
    values = tuple(check(v, name) for v in values)
    if not values:
        raise ValueError(f"{name} must not be empty")
    return values


def train_grid(
    placement,
    *,
    depth,
    lrs,
    warmups=(0,),
    seeds=(0,),
    width=64,
    steps=300,
    qk_norm=False,
    init="xavier",
    clip=None,
    heads=4,
    vocab=16,
    seq_len=16,
    batch=32,
    weight_decay=0.0,
    decay="cosine",
    eval_batch=512,
    device="cpu",
) -> tuple[TrainResult, ...]:
    """Train one model per (learning rate, warmup, seed) at once, vectorized over the runs.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        LayerNorm placement (shared by all runs).
    depth : int, keyword-only
        Number of layers.
    lrs : float or sequence of float, keyword-only
        Peak learning rates (> 0).
    warmups : int or sequence of int, keyword-only
        Linear warmup lengths (0: none).
    seeds : int or sequence of int, keyword-only
        Seeds; seed ``s`` draws the weights from ``default_rng(s)`` and the training
        batches from ``default_rng([s, 1])`` (runs that share a seed see the same data).
    width : int, keyword-only
        Model width.
    steps : int, keyword-only
        Optimizer steps.
    qk_norm : bool, keyword-only
        QK-Norm in every attention sublayer.
    init : {"xavier", "gpt2"}, keyword-only
        Initialization (see :class:`TinyTransformer`).
    clip : float, optional, keyword-only
        Clip each run's global gradient norm to this value.
    heads : int, keyword-only
        Attention heads.
    vocab : int, keyword-only
        Vocabulary size.
    seq_len : int, keyword-only
        Input length (even).
    batch : int, keyword-only
        Sequences per step.
    weight_decay : float, keyword-only
        AdamW's decoupled weight decay (>= 0).
    decay : {"cosine", "none"}, keyword-only
        Learning-rate decay after warmup (see :func:`lr_schedule`).
    eval_batch : int, keyword-only
        Size of the held-out batch (the same sequences for every run).
    device : str or torch.device, keyword-only
        Where the runs are trained (default ``"cpu"``, the setting of every chapter).
        The weights and batches are drawn on the CPU (numpy) and moved there, so a run
        starts from the same weights and sees the same data on any device; its
        floating-point results follow that device's kernels.

    Returns
    -------
    tuple of TrainResult
        One per run, in the order of ``itertools.product(lrs, warmups, seeds)``.

    Raises
    ------
    TypeError
        A non-numeric rate or clip, or a non-integer count.
    ValueError
        A bad choice, a rate or clip <= 0, a warmup longer than ``steps``, an empty list
        or a count < 1.

    Notes
    -----
    The runs are independent: each has its own weights, AdamW state and learning-rate
    schedule; they are stacked along a leading axis and evaluated with
    ``torch.func.vmap`` over :class:`TinyTransformer`'s own forward, so one step costs
    one batched pass instead of one pass per run. AdamW is written out per run
    (betas (0.9, 0.98), eps 1e-8, the update of ``torch.optim.AdamW``); the gradient norm
    and clipping are per run. A run whose loss or gradient norm turns non-finite is
    frozen and reported as diverged (see :class:`TrainResult`). Used in the chapter
    "Warmup and learning rates" (``book/warmup-lr.md``).
    """
    from itertools import product

    from torch.func import functional_call, stack_module_state, vmap

    lrs = _as_tuple(lrs, "lrs", check_positive_real)
    warmups = _as_tuple(warmups, "warmups", lambda v, n: check_int(v, n, 0))
    seeds = _as_tuple(seeds, "seeds", lambda v, n: check_int(v, n, 0))
    steps, batch, eval_batch, decay, clip, weight_decay = _check_run_options(
        steps, batch, eval_batch, decay, clip, weight_decay, seq_len
    )
    if max(warmups) > steps:
        raise ValueError(f"warmup_steps must be <= steps; got warmup {max(warmups)} with steps={steps}")
    try:
        dev = torch.device(device)
    except (TypeError, RuntimeError) as exc:
        raise ValueError(f"device must name a torch device such as 'cpu' or 'cuda:0'; got {device!r}") from exc
    runs = list(product(lrs, warmups, seeds))
    E = len(runs)
    kw = dict(width=width, heads=heads, vocab=vocab, seq_len=seq_len, qk_norm=qk_norm, init=init)
    models = {s: TinyTransformer(placement, depth, seed=s, **kw) for s in seeds}
    if dev.type != "cpu":
        for model in models.values():
            model.to(dev)
    params, buffers = stack_module_state([models[s] for _, _, s in runs])
    names = list(params)
    base = models[seeds[0]]

    def member_loss(p, b, tokens, mask):
        logits = functional_call(base, (p, b), (tokens[:, :-1],))
        nll = F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")
        max_logit = torch.stack([blk.attn.max_logit for blk in base.blocks]).amax()
        min_entropy = torch.stack([blk.attn.min_entropy for blk in base.blocks]).amin()
        return (nll * mask).sum() / mask.sum(), (max_logit, min_entropy)

    batched = vmap(member_loss, in_dims=(0, 0, 0, 0))
    seed_index = torch.tensor([seeds.index(s) for _, _, s in runs])
    data_rngs = [np.random.default_rng([s, 1]) for s in seeds]
    m_state = {n: torch.zeros_like(params[n]) for n in names}
    v_state = {n: torch.zeros_like(params[n]) for n in names}
    active = torch.ones(E, dtype=torch.bool, device=dev)
    rec = {k: np.full((E, steps), np.nan) for k in ("loss", "grad_norm", "max_logit", "lr", "entropy", "gain")}
    gain_names = [(f"blocks.{i}.attn.q_norm.weight", f"blocks.{i}.attn.k_norm.weight") for i in range(depth)]
    b1, b2 = _BETAS
    for t in range(steps):
        lr_t = torch.tensor([lr_schedule(t, lr=lr, warmup_steps=w, steps=steps, decay=decay) for lr, w, _ in runs])
        data = [reversal_task(batch, seq_len=seq_len, vocab=vocab, rng=r) for r in data_rngs]
        tokens = torch.stack([d[0] for d in data])[seed_index]
        mask = torch.stack([d[1] for d in data])[seed_index]
        if dev.type != "cpu":
            lr_t, tokens, mask = lr_t.to(dev), tokens.to(dev), mask.to(dev)
        for n in names:
            params[n].grad = None
        losses, (max_logit, min_entropy) = batched(params, buffers, tokens, mask)
        torch.where(active, losses, torch.zeros_like(losses)).sum().backward()
        with torch.no_grad():
            sq = sum(params[n].grad.flatten(1).pow(2).sum(1) for n in names)
            gnorm = sq.sqrt()
            finite = torch.isfinite(losses.detach()) & torch.isfinite(gnorm)
            ok_np, active_np = finite.cpu().numpy(), active.cpu().numpy()
            rec["loss"][:, t] = np.where(ok_np & active_np, losses.detach().cpu().numpy(), np.nan)
            rec["grad_norm"][:, t] = np.where(ok_np & active_np, gnorm.cpu().numpy(), np.nan)
            rec["max_logit"][:, t] = np.where(active_np, max_logit.cpu().numpy(), np.nan)
            rec["lr"][:, t] = np.where(active_np, lr_t.cpu().numpy(), np.nan)
            rec["entropy"][:, t] = np.where(active_np, min_entropy.cpu().numpy(), np.nan)
            if qk_norm:  # the QK-Norm bound's factor max|g_q|·max|g_k| (largest layer), before this step's update
                gain = torch.stack([params[a].abs().amax(1) * params[b].abs().amax(1) for a, b in gain_names]).amax(0)
                rec["gain"][:, t] = np.where(active_np, gain.cpu().numpy(), np.nan)
            active &= finite
            coef = torch.ones(E, device=dev) if clip is None else (clip / (gnorm + 1e-6)).clamp(max=1.0)
            coef = torch.where(active, coef, torch.zeros(E, device=dev))
            lr_t = torch.where(active, lr_t, torch.zeros(E, device=dev)).to(params[names[0]].dtype)
            c1, c2 = 1.0 - b1 ** (t + 1), 1.0 - b2 ** (t + 1)
            for n in names:
                shape = (E,) + (1,) * (params[n].ndim - 1)
                g = torch.nan_to_num(params[n].grad) * coef.view(shape).to(params[n].dtype)
                m_state[n].mul_(b1).add_(g, alpha=1.0 - b1)
                v_state[n].mul_(b2).addcmul_(g, g, value=1.0 - b2)
                if weight_decay:
                    params[n].mul_(1.0 - lr_t.view(shape) * weight_decay)
                denom = (v_state[n].sqrt() / math.sqrt(c2)).add_(_ADAM_EPS)
                params[n].sub_(lr_t.view(shape) / c1 * m_state[n] / denom)
    eval_tokens, eval_mask = reversal_task(eval_batch, seq_len=seq_len, vocab=vocab, rng=np.random.default_rng(_EVAL_SEED))
    eval_tokens, eval_mask = eval_tokens.to(dev), eval_mask.to(dev)

    def member_eval(p, b):
        logits = functional_call(base, (p, b), (eval_tokens[:, :-1],))
        nll = F.cross_entropy(logits.transpose(1, 2), eval_tokens[:, 1:], reduction="none")
        hit = ((logits.argmax(-1) == eval_tokens[:, 1:]) & eval_mask).float()
        return (nll * eval_mask).sum() / eval_mask.sum(), hit.sum() / eval_mask.sum()

    with torch.no_grad():
        final_loss, final_acc = (v.cpu() for v in vmap(member_eval)(params, buffers))
        active = active.cpu()
    results = []
    for e, (lr, w, s) in enumerate(runs):
        ok = bool(active[e]) and math.isfinite(float(final_loss[e]))
        results.append(
            TrainResult(
                placement=placement,
                depth=int(depth),
                width=int(width),
                lr=lr,
                warmup_steps=w,
                steps=steps,
                seed=s,
                init=init,
                qk_norm=bool(qk_norm),
                clip=clip,
                loss=_readonly(rec["loss"][e]),
                grad_norm=_readonly(rec["grad_norm"][e]),
                max_logit=_readonly(rec["max_logit"][e]),
                attn_entropy=_readonly(rec["entropy"][e]),
                qk_gain=_readonly(rec["gain"][e]),
                lr_used=_readonly(rec["lr"][e]),
                final_loss=float(final_loss[e]) if ok else float("nan"),
                final_accuracy=float(final_acc[e]) if ok else float("nan"),
                diverged=not ok,
            )
        )
    return tuple(results)


def train(
    placement,
    *,
    depth,
    width=64,
    lr,
    warmup_steps=0,
    steps=300,
    seed=0,
    qk_norm=False,
    init="xavier",
    clip=None,
    heads=4,
    vocab=16,
    seq_len=16,
    batch=32,
    weight_decay=0.0,
    decay="cosine",
    eval_batch=512,
) -> TrainResult:
    """Train a :class:`TinyTransformer` on the reversal task with AdamW.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        LayerNorm placement.
    depth : int, keyword-only
        Number of layers.
    width : int, keyword-only
        Model width.
    lr : float, keyword-only
        Peak learning rate (> 0).
    warmup_steps : int, keyword-only
        Linear warmup steps (0: none); see :func:`lr_schedule`.
    steps : int, keyword-only
        Optimizer steps; each draws a fresh batch.
    seed : int, keyword-only
        Seeds the weights (``default_rng(seed)``) and the training batches
        (``default_rng([seed, 1])``).
    qk_norm : bool, keyword-only
        QK-Norm in every attention sublayer.
    init : {"xavier", "gpt2"}, keyword-only
        Initialization (see :class:`TinyTransformer`).
    clip : float, optional, keyword-only
        Clip the global gradient norm to this value (None: no clipping).
    heads : int, keyword-only
        Attention heads.
    vocab : int, keyword-only
        Vocabulary size.
    seq_len : int, keyword-only
        Input length (even).
    batch : int, keyword-only
        Sequences per step.
    weight_decay : float, keyword-only
        AdamW's decoupled weight decay (>= 0), applied to every parameter.
    decay : {"cosine", "none"}, keyword-only
        Learning-rate decay after warmup (see :func:`lr_schedule`).
    eval_batch : int, keyword-only
        Size of the held-out batch ``final_loss`` is measured on; the same sequences
        for every run (a fixed seed independent of ``seed``).

    Returns
    -------
    TrainResult

    Raises
    ------
    TypeError
        A non-numeric rate or clip, or a non-integer count.
    ValueError
        A bad choice, ``lr <= 0``, ``clip <= 0``, ``warmup_steps > steps`` or a count < 1.

    Notes
    -----
    AdamW with betas (0.9, 0.98) and eps 1e-8 (the Transformer's Adam settings), learning
    rate of step t from :func:`lr_schedule`, the loss the cross-entropy on the reversed
    half of each sequence. The one-run case of :func:`train_grid` (same code path, same
    numbers). Deterministic for a seed at a fixed number of torch threads. See the
    chapter "A real Transformer" (``book/real-transformer.md``).
    """
    (result,) = train_grid(
        placement,
        depth=depth,
        lrs=(check_positive_real(lr, "lr"),),
        warmups=(check_int(warmup_steps, "warmup_steps", 0),),
        seeds=(check_int(seed, "seed", 0),),
        width=width,
        steps=steps,
        qk_norm=qk_norm,
        init=init,
        clip=clip,
        heads=heads,
        vocab=vocab,
        seq_len=seq_len,
        batch=batch,
        weight_decay=weight_decay,
        decay=decay,
        eval_batch=eval_batch,
    )
    return result


def _worker_threads(threads: int) -> None:
    torch.set_num_threads(threads)


def submit_grids(jobs, executor, *, device=None) -> list:
    """Hand :func:`train_grid` jobs to an executor and return at once: one future per job.

    Parameters
    ----------
    jobs : sequence of dict
        Keyword arguments of one :func:`train_grid` call each (including ``placement``).
    executor : concurrent.futures.Executor
        Any object with ``submit`` (e.g. :func:`worker_pool`); the caller owns it.
    device : str or torch.device, optional, keyword-only
        Passed to every job that names none (as in :func:`train_grids`).

    Returns
    -------
    list of concurrent.futures.Future
        In the order of ``jobs``; ``future.result()`` is ``train_grid(**job)``.

    Raises
    ------
    TypeError
        A job that is not a dict, or an ``executor`` without ``submit``.

    Notes
    -----
    A page that trains for several sections submits every job at its start, so the workers
    never wait for the page, and each section waits only for its own futures (each cell
    then stays well inside a cell's time limit). :func:`train_grids` with ``executor=`` is
    this followed by ``[f.result() for f in futures]``. Used by the chapter "Warmup and
    learning rates" (``book/warmup-lr.md``).
    """
    jobs = list(jobs)
    for j in jobs:
        if not isinstance(j, dict):
            raise TypeError(f"each job must be a dict of train_grid keyword arguments; got {type(j).__name__}")
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(
            f"executor must be a concurrent.futures.Executor (an object with submit); got {type(executor).__name__}"
        )
    if device is not None:
        jobs = [{"device": device, **j} for j in jobs]
    return [executor.submit(_train_grid_job, j) for j in jobs]


def design_jobs(design, *, seeds, few=(), **common) -> list:
    """The :func:`train_grid` jobs of an experiment given cell by cell, longest first.

    Parameters
    ----------
    design : mapping
        ``{(placement, warmup_steps, steps): (rates, few_rates)}``: each rate of ``rates`` is
        trained with ``seeds``, each of ``few_rates`` with ``few``.
    seeds, few : sequence of int, keyword-only
        The two seed sets.
    **common
        Further :func:`train_grid` keyword arguments shared by every job (``depth``, ``width``, ...).

    Returns
    -------
    list of dict
        One job per (placement, warmup, steps, seed set) with rates, sorted by decreasing
        size (rates × seeds × steps), so that workers taking jobs in order finish together.

    Raises
    ------
    TypeError
        A design that is not a mapping of 3-tuples to pairs of rate sequences.

    Notes
    -----
    Used by the chapter "Warmup and learning rates" (``book/warmup-lr.md``) with
    :func:`submit_grids`.
    """
    if not hasattr(design, "items"):
        raise TypeError(f"design must be a mapping of (placement, warmup, steps) to (rates, few_rates); got {type(design).__name__}")
    jobs = []
    for key, value in design.items():
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(value, tuple) and len(value) == 2):
            raise TypeError(f"design entries must be (placement, warmup, steps): (rates, few_rates); got {key!r}: {value!r}")
        (placement, warmup, steps), (many, some) = key, value
        for lrs, seed_set in ((tuple(many), tuple(seeds)), (tuple(some), tuple(few))):
            if lrs and seed_set:
                jobs.append(dict(placement=placement, warmups=(warmup,), steps=steps, lrs=lrs, seeds=seed_set, **common))
    return sorted(jobs, key=lambda j: -len(j["lrs"]) * len(j["seeds"]) * j["steps"])


def worker_pool(processes=2, *, threads=1):
    """A process pool for :func:`train_grids` that a page can reuse from cell to cell.

    Parameters
    ----------
    processes : int
        Worker processes (>= 1).
    threads : int, keyword-only
        torch threads per worker.

    Returns
    -------
    concurrent.futures.ProcessPoolExecutor
        Started with the ``spawn`` method; the caller shuts it down (``pool.shutdown()``,
        or use it as a context manager).

    Raises
    ------
    TypeError
        A non-integer count.
    ValueError
        A count < 1.

    Notes
    -----
    Pass it as ``train_grids(jobs, executor=pool)``. Starting workers costs a few seconds
    (each imports torch), so a page that trains in several cells starts one pool. Used by
    the chapter "Warmup and learning rates" (``book/warmup-lr.md``).
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    processes = check_int(processes, "processes")
    threads = check_int(threads, "threads")
    return ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_threads,
        initargs=(threads,),
    )


def _train_grid_job(job: dict):
    return train_grid(**job)


def train_grids(jobs, *, processes=2, threads=1, executor=None, device=None) -> list:
    """Run several :func:`train_grid` calls, spread over worker processes or any executor.

    Parameters
    ----------
    jobs : sequence of dict
        Keyword arguments of one :func:`train_grid` call each (including ``placement``).
    processes : int, keyword-only
        Worker processes of the default pool (1: run in this process, one job after the
        other). Ignored when ``executor`` is given.
    threads : int, keyword-only
        torch threads per worker process of the default pool (ignored when
        ``processes == 1`` or ``executor`` is given).
    executor : concurrent.futures.Executor, optional, keyword-only
        Where to run the jobs instead of the default pool: any object with the
        ``submit`` method of :class:`concurrent.futures.Executor` whose futures have
        ``result()`` (a ``ThreadPoolExecutor``, a ``ProcessPoolExecutor``, a Dask
        ``distributed.Client``'s ``get_executor()``, Ray's ``ray.util.multiprocessing``
        pool wrapped in an executor, ...). The caller owns it: it is not shut down here.
    device : str or torch.device, optional, keyword-only
        Passed to every job as ``train_grid(..., device=device)`` (a job's own
        ``device`` key wins). None: each job's own setting (default ``"cpu"``).

    Returns
    -------
    list of tuple of TrainResult
        ``train_grid(**job)`` for each job, in the order of ``jobs``.

    Raises
    ------
    TypeError
        A job that is not a mapping, an ``executor`` without ``submit``, or non-integer
        counts.
    ValueError
        ``processes`` or ``threads`` < 1, or a job that :func:`train_grid` rejects.

    Notes
    -----
    Small batched models use one core well and many threads badly, so a chapter gets
    more from two processes with one thread each than from one process with two
    threads. The default workers are started with the ``spawn`` method (safe after
    torch has started threads) and each result is the same as ``train_grid(**job)`` in
    a process with ``threads`` torch threads. A job is a plain dict and the function
    that runs it is importable (``normlib.transformer``), so any executor that can
    pickle a call can run it on other machines; set the torch threads of those workers
    there. Used by the chapter "Warmup and learning rates" (``book/warmup-lr.md``).

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from normlib.transformer import train_grids
    >>> jobs = [dict(placement=p, depth=1, lrs=1e-3, width=8, heads=2, steps=2, batch=4,
    ...              eval_batch=8) for p in ("pre", "post")]
    >>> with ThreadPoolExecutor(max_workers=2) as pool:
    ...     results = train_grids(jobs, executor=pool)
    >>> [r[0].placement for r in results]
    ['pre', 'post']
    """
    processes = check_int(processes, "processes")
    threads = check_int(threads, "threads")
    jobs = list(jobs)
    for j in jobs:
        if not isinstance(j, dict):
            raise TypeError(f"each job must be a dict of train_grid keyword arguments; got {type(j).__name__}")
    if device is not None:
        jobs = [{"device": device, **j} for j in jobs]
    if executor is not None:
        if not callable(getattr(executor, "submit", None)):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor (an object with submit); got {type(executor).__name__}"
            )
        return [f.result() for f in submit_grids(jobs, executor)]
    if processes == 1 or len(jobs) <= 1:
        return [train_grid(**j) for j in jobs]
    with worker_pool(min(processes, len(jobs)), threads=threads) as pool:
        return list(pool.map(_train_grid_job, jobs))


# ----------------------------------------------------------------------------- reading a sweep


def initial_losses(
    placement,
    *,
    depth,
    seeds,
    steps,
    width=64,
    heads=4,
    vocab=16,
    seq_len=16,
    batch=32,
    qk_norm=False,
    init="xavier",
) -> np.ndarray:
    """The untrained model's loss on the training batches that :func:`train_grid` draws.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        LayerNorm placement.
    depth : int, keyword-only
        Number of layers.
    seeds : int or sequence of int, keyword-only
        Seeds; seed ``s`` builds the model of ``TinyTransformer(..., seed=s)`` and draws the
        batches from ``default_rng([s, 1])``, exactly as :func:`train_grid` does.
    steps : int, keyword-only
        Number of batches (steps ``0 … steps - 1``).
    width, heads, vocab, seq_len, batch : int, keyword-only
        As in :func:`train_grid`.
    qk_norm : bool, keyword-only
        QK-Norm in every attention sublayer.
    init : {"xavier", "gpt2"}, keyword-only
        Initialization.

    Returns
    -------
    numpy.ndarray, shape (len(seeds), steps)
        ``out[i, t]``: the loss (cross-entropy on the reversed half) of seed ``seeds[i]``'s
        initial model on the batch of training step ``t``.

    Raises
    ------
    TypeError
        A non-integer count.
    ValueError
        A bad choice, an empty seed list or a count < 1.

    Notes
    -----
    A run's recorded loss ``TrainResult.loss[t]`` is measured on the same batch before
    step ``t``'s update, so ``loss[t] - out[i, t]`` is how much worse (positive) or better
    (negative) the run is than its own starting point, with the batch-to-batch noise of
    the loss cancelled (it is exactly 0 at ``t = 0`` up to rounding). The chapter
    "Warmup and learning rates" (``book/warmup-lr.md``) defines an early loss rise with it.
    """
    seeds = _as_tuple(seeds, "seeds", lambda v, n: check_int(v, n, 0))
    steps = check_int(steps, "steps")
    batch = check_int(batch, "batch")
    out = np.empty((len(seeds), steps))
    for i, s in enumerate(seeds):
        model = TinyTransformer(
            placement, depth, width=width, heads=heads, vocab=vocab, seq_len=seq_len, qk_norm=qk_norm, init=init, seed=s
        )
        rng = np.random.default_rng([s, 1])
        with torch.no_grad():
            for t in range(steps):
                tokens, mask = reversal_task(batch, seq_len=seq_len, vocab=vocab, rng=rng)
                out[i, t] = float(model.loss(tokens, mask))
    return out


def majority_call(successes, seeds, *, level=0.05) -> str:
    """Read ``successes`` of ``seeds`` runs as "yes", "no" or "undecided" (one-sided binomial tests).

    Parameters
    ----------
    successes : int
        Runs of the cell that show the outcome (e.g. solve the task), ``0 … seeds``.
    seeds : int
        Runs in the cell (>= 1).
    level : float, keyword-only
        Size of each one-sided test, in (0, 1/2).

    Returns
    -------
    str
        ``"yes"`` when so many runs show the outcome that a coin (p = 1/2 per seed) would
        give as many with probability below ``level``: ``P(X >= successes) < level`` for
        ``X ~ Binomial(seeds, 1/2)``; ``"no"`` when ``P(X <= successes) < level``;
        ``"undecided"`` otherwise.

    Raises
    ------
    TypeError
        A non-integer count or a non-numeric level.
    ValueError
        ``successes`` outside ``0 … seeds``, ``seeds < 1`` or ``level`` outside (0, 1/2).

    Notes
    -----
    With 8 seeds and level 0.05 a cell is "yes" from 7 of 8 (``P = 9/256 ≈ 0.035``) and "no"
    at 1 of 8 or fewer; 2 to 6 of 8 is "undecided" (the seeds disagree). With 3 seeds no
    count decides (``P(X = 3) = 1/8``). A seed count fixed in advance and this rule make a
    cell's reading a decision taken before the runs. See the chapter "Warmup and learning
    rates" (``book/warmup-lr.md``).
    """
    seeds = check_int(seeds, "seeds")
    successes = check_int(successes, "successes", 0)
    if successes > seeds:
        raise ValueError(f"successes must be at most seeds; got {successes} of {seeds}")
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)):
        raise TypeError(f"level must be a number; got {type(level).__name__}")
    if not 0.0 < float(level) < 0.5:
        raise ValueError(f"level must lie in (0, 1/2); got {level}")
    pmf = [math.comb(seeds, j) / 2.0**seeds for j in range(seeds + 1)]
    if sum(pmf[successes:]) < level:
        return "yes"
    if sum(pmf[: successes + 1]) < level:
        return "no"
    return "undecided"


# ----------------------------------------------------------------------------- DeepNet's model update, by parameter group


def _branch_weight(name: str) -> bool:
    return name.startswith("blocks.") and name.split(".")[-2] in ("v", "o", "w1", "w2")


def _layernorm_param(name: str) -> bool:
    return name.startswith("blocks.") and name.split(".")[-2] in ("ln1", "ln2")


def _any_param(name: str) -> bool:
    return True


#: The parameter groups of :func:`first_update_sizes`, by name: predicates on the names of
#: :class:`TinyTransformer` parameters. ``"branch"``: the weights DeepNet's bound covers and
#: DeepNorm's β scales (attention value and output projections, both FFN weights);
#: ``"layernorm"``: every block's LayerNorm gains and biases (outside the bound); ``"all"``.
UPDATE_GROUPS = MappingProxyType({"branch": _branch_weight, "layernorm": _layernorm_param, "all": _any_param})

#: The (optimizer, group) pairs :func:`first_updates` measures by default, and its learning rates.
_DEFAULT_MEASURE = (("sgd", "branch"), ("sgd", "layernorm"), ("sgd", "all"), ("adam", "branch"), ("adam", "all"))
_DEFAULT_LRS = MappingProxyType({"sgd": 1e-6, "adam": 1e-5})


def _check_measure(measure, lrs):
    measure = tuple(tuple(m) for m in measure)
    if not measure:
        raise ValueError("measure must name at least one (optimizer, group) pair")
    for m in measure:
        if len(m) != 2:
            raise ValueError(f"measure must hold (optimizer, group) pairs; got {m!r}")
        check_choice(m[0], "optimizer", ("sgd", "adam"))
        check_choice(m[1], "group", tuple(UPDATE_GROUPS))
    if len(set(measure)) != len(measure):
        raise ValueError(f"measure names a pair twice: {measure!r}")
    if not isinstance(lrs, Mapping):
        raise TypeError(f"lrs must map each optimizer to its learning rate; got {type(lrs).__name__}")
    rates = {}
    for opt in sorted({m[0] for m in measure}):
        if opt not in lrs:
            raise ValueError(f"lrs has no learning rate for optimizer {opt!r}")
        rates[opt] = check_positive_real(lrs[opt], f"lrs[{opt!r}]")
    return measure, rates


def first_update_sizes(model, tokens, *, measure, lrs, mask=None) -> dict:
    """``‖ΔF‖`` after one step restricted to a group of parameters, for several groups and optimizers at once.

    Parameters
    ----------
    model : TinyTransformer
        The model at initialization; it is left as it was (every stepped parameter is
        restored from a copy).
    tokens : torch.LongTensor, shape (B, T)
        The batch of the step and of the measurement, as in :func:`first_update_norm`.
    measure : sequence of (str, str), keyword-only
        ``(optimizer, group)`` pairs: ``optimizer`` in ``{"sgd", "adam"}``, ``group`` a key
        of :data:`UPDATE_GROUPS`.
    lrs : mapping of str to float, keyword-only
        The learning rate η of each optimizer named in ``measure`` (> 0).
    mask : torch.BoolTensor, shape (B, T - 1), optional
        Scored positions of the loss (default: all).

    Returns
    -------
    dict of (str, str) to float
        For each pair, ``sqrt(mean over tokens of ‖F(x, θ*) − F(x, θ)‖²)`` where only the
        group's parameters take the optimizer's first step: the value
        ``first_update_norm(model, tokens, lr=lrs[optimizer], optimizer=optimizer,
        params=UPDATE_GROUPS[group])`` returns.

    Raises
    ------
    TypeError
        Not a TinyTransformer, bad tokens, or ``lrs`` not a mapping.
    ValueError
        An unknown optimizer or group, a repeated or empty ``measure``, or a missing or
        non-positive learning rate.

    Notes
    -----
    One backward pass serves every pair: SGD's step is ``−η g``, Adam's first step
    ``−η g / (|g| + 10⁻⁸)`` (``torch.optim.Adam``'s defaults, bias-corrected), applied to
    the group's parameters in place, then undone. DeepNet (Wang et al., 2022), Theorem
    4.2, bounds ``‖ΔF‖`` by a sum over the sublayers of their weights' scale over α times
    the size of their step; the groups take that bound apart. See the chapter "DeepNorm"
    (``book/deepnorm.md``).
    """
    _check_model(model)
    _check_tokens(tokens, model)
    measure, rates = _check_measure(measure, lrs)
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(model.loss(tokens, mask), [p for _, p in named], allow_unused=True)
    inp = tokens[:, :-1]
    out = {}
    with torch.no_grad():
        base = model.features(inp)
        for opt, group in measure:
            chosen = UPDATE_GROUPS[group]
            saved = []
            for (name, p), g in zip(named, grads):
                if g is None or not chosen(name):
                    continue
                saved.append((p, p.clone()))
                step = g if opt == "sgd" else g / (g.abs() + _ADAM_EPS)
                p.sub_(rates[opt] * step)
            delta = model.features(inp) - base
            out[opt, group] = float(delta.pow(2).sum(-1).mean().sqrt())
            for p, original in saved:
                p.copy_(original)
    return out


_ADAM_EPS = 1e-8  # torch.optim.Adam's default eps


@dataclass(frozen=True, eq=False)
class FirstUpdates:
    """DeepNet's model update at initialization, seed by seed and depth by depth (:func:`first_updates`).

    Attributes
    ----------
    placement : {"post", "pre", "deepnorm"}
    depths, seeds : tuple of int
    width, heads, batch : int
        The model's width and heads, and the number of task sequences of the step.
    lrs : mapping of str to float
        The learning rate of each optimizer.
    sizes : mapping of (str, str) to ndarray, shape (len(seeds), len(depths))
        ``‖ΔF‖ / η`` for each measured ``(optimizer, group)`` pair, read-only.
    """

    placement: str
    depths: tuple
    seeds: tuple
    width: int
    heads: int
    batch: int
    lrs: Mapping
    sizes: Mapping

    def slopes(self, optimizer: str, group: str) -> np.ndarray:
        """Each seed's least-squares slope of ``ln(‖ΔF‖/η)`` against ``ln(depth)``, shape (seeds,).

        Their mean is the slope of the geometric mean over seeds (the fit is linear in the
        logarithms). Raises KeyError for a pair that was not measured.
        """
        y = np.log(self.sizes[optimizer, group])  # (seeds, depths)
        x = np.log(np.asarray(self.depths, dtype=float))
        xc = x - x.mean()
        return (y - y.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def _first_update_job(job: dict) -> dict:
    placement, depths, seed = job["placement"], job["depths"], job["seed"]
    rows = {m: [] for m in job["measure"]}
    tokens, _ = reversal_task(job["batch"], rng=np.random.default_rng([seed, 9]))
    for depth in depths:
        model = TinyTransformer(placement, depth, width=job["width"], heads=job["heads"], seed=seed).double()
        got = first_update_sizes(model, tokens, measure=job["measure"], lrs=job["lrs"])
        for m in rows:
            rows[m].append(got[m] / job["lrs"][m[0]])
    return rows


def first_updates(placements, depths, *, seeds, width=32, heads=2, batch=8, measure=_DEFAULT_MEASURE,
                  lrs=_DEFAULT_LRS, processes=2, threads=1) -> dict:
    """``‖ΔF‖/η`` after one step at initialization, over placements, seeds and depths, in worker processes.

    Parameters
    ----------
    placements : sequence of {"post", "pre", "deepnorm"}
    depths : sequence of int
        Numbers of layers ``M`` (each >= 1), in increasing order.
    seeds : sequence of int, keyword-only
        Model seeds (>= 0). Seed ``s`` builds ``TinyTransformer(placement, M, seed=s)`` at
        every depth (the same raw draws for every placement) and the step's batch
        ``reversal_task(batch, rng=default_rng([s, 9]))``, the same at every depth.
    width, heads, batch : int, keyword-only
        The model's width and heads; the task sequences of the step.
    measure : sequence of (str, str), keyword-only
        ``(optimizer, group)`` pairs, as in :func:`first_update_sizes`. Default: SGD on the
        branch weights, the LayerNorm parameters and all parameters; Adam on the branch
        weights and all parameters.
    lrs : mapping of str to float, keyword-only
        η of each optimizer; default ``{"sgd": 1e-6, "adam": 1e-5}``, small enough that
        ``ΔF`` is linear in η (float64).
    processes : int, keyword-only
        Worker processes (``spawn``; 1: run here, one job after the other). A job is one
        (placement, seed) pair; the numbers do not depend on ``processes``.
    threads : int, keyword-only
        torch threads per worker process (ignored when ``processes == 1``).

    Returns
    -------
    dict of str to FirstUpdates
        One entry per placement.

    Raises
    ------
    TypeError
        Non-integer counts, depths or seeds.
    ValueError
        An unknown placement, optimizer or group, an empty or non-increasing ``depths``, an
        empty ``seeds``, a bad learning rate or a count < 1.

    Notes
    -----
    Computed in float64 with :func:`first_update_sizes` (one backward pass per model).
    DeepNet (Wang et al., 2022), Theorem 4.2 and Section 4.3, bounds this change for SGD by
    ``O(η · number of sublayers)`` for Post-LN and ``Θ(η)`` for DeepNorm. Used in the chapter
    "DeepNorm" (``book/deepnorm.md``).

    Examples
    --------
    >>> from normlib.transformer import first_updates
    >>> res = first_updates(["deepnorm"], [1, 2], seeds=[0], width=8, heads=2, batch=2, processes=1)
    >>> res["deepnorm"].sizes["sgd", "branch"].shape
    (1, 2)
    """
    placements = tuple(check_choice(p, "placement", PLACEMENTS) for p in placements)
    if not placements:
        raise ValueError("placements must name at least one placement")
    depths = tuple(check_int(L, "depth") for L in depths)
    if not depths or any(b <= a for a, b in zip(depths, depths[1:])):
        raise ValueError(f"depths must be a non-empty increasing sequence; got {depths!r}")
    seeds = tuple(check_int(s, "seed", 0) for s in seeds)
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    width, heads, batch = check_int(width, "width"), check_int(heads, "heads"), check_int(batch, "batch")
    processes, threads = check_int(processes, "processes"), check_int(threads, "threads")
    measure, rates = _check_measure(measure, lrs)
    jobs = [dict(placement=p, depths=depths, seed=s, width=width, heads=heads, batch=batch, measure=measure, lrs=rates)
            for p in placements for s in seeds]
    if processes == 1:
        rows = [_first_update_job(j) for j in jobs]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(processes, len(jobs)), mp_context=ctx,
                                 initializer=_worker_threads, initargs=(threads,)) as pool:
            rows = list(pool.map(_first_update_job, jobs))
    out = {}
    for i, p in enumerate(placements):
        mine = rows[i * len(seeds):(i + 1) * len(seeds)]
        sizes = {}
        for m in measure:
            a = np.array([r[m] for r in mine], dtype=np.float64)
            a.setflags(write=False)
            sizes[m] = a
        out[p] = FirstUpdates(placement=p, depths=depths, seeds=seeds, width=width, heads=heads, batch=batch,
                              lrs=MappingProxyType(dict(rates)), sizes=MappingProxyType(sizes))
    return out


# ----------------------------------------------------------------------------- the initialization scale


def set_normal_init(model, sigma):
    """Rescale every weight matrix of the model to ``N(0, sigma²)``, keeping its seeded draws.

    Parameters
    ----------
    model : TinyTransformer
        Modified in place: each 2-D parameter (the token and position embeddings, every
        projection, the output head) becomes ``sigma · z``, where ``z`` is the standard
        normal draw the model was built from. LayerNorm gains and biases are untouched.
    sigma : float
        The standard deviation (> 0), the same for every matrix (BERT's recipe, without
        its truncation); the variance a ``d × d`` projection passes on is ``sigma² d``.

    Returns
    -------
    TinyTransformer
        ``model`` itself.

    Raises
    ------
    TypeError
        Not a TinyTransformer, or a non-numeric ``sigma``.
    ValueError
        ``sigma <= 0`` or not finite.

    Notes
    -----
    Models built with the same seed share their draws ``z``, so models that differ only in
    ``sigma`` (or in the placement) are paired. Calling the function again rescales from
    the current ``sigma``. Used in the chapter "A real Transformer"
    (``book/real-transformer.md``) to vary ``sigma`` at a fixed width and ``sigma² d`` at
    several widths.
    """
    _check_model(model)
    sigma = check_positive_real(sigma, "sigma")
    current = getattr(model, "_normal_sigma", None)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 2:
                p.mul_(sigma / (current if current is not None else model._std(name, p)))
    model._normal_sigma = sigma
    return model


@dataclass(frozen=True, eq=False)
class FFNGradStats:
    """Per-layer statistics of the ``W2`` gradients of ``groups`` equal mini-batches.

    ``mean_norm`` (depth,): ``‖ḡ‖``, the norm of the mean of the mini-batch gradients (the
    gradient of the loss averaged over the whole batch); ``expected_sq`` (depth,): an
    unbiased estimate of ``‖E g‖²``, the squared norm of the expected mini-batch gradient
    (it can come out negative when the gradient is mostly noise); ``group_norms``
    (groups, depth): each mini-batch gradient's norm. All float64, read-only.
    """

    mean_norm: np.ndarray
    expected_sq: np.ndarray
    group_norms: np.ndarray
    groups: int

    def __post_init__(self):
        for name in ("mean_norm", "expected_sq", "group_norms"):
            getattr(self, name).setflags(write=False)

    def __reduce__(self):  # rebuild through __init__, so the arrays stay read-only after pickling
        return (type(self), tuple(getattr(self, f) for f in self.__dataclass_fields__))

    @property
    def noise_share(self) -> np.ndarray:
        """``1 − expected_sq / mean_norm²`` per layer: the share of ``‖ḡ‖²`` that is mini-batch noise."""
        return 1.0 - self.expected_sq / self.mean_norm**2


def linear_grad_stats(loss_fn, modules, *, groups) -> FFNGradStats:
    """The weight gradient of linear layers, mini-batch by mini-batch, from one forward and one backward pass.

    Parameters
    ----------
    loss_fn : callable
        Called with no argument, it runs the forward pass and returns the mean of
        ``groups`` mini-batch losses, mini-batch ``k`` being the ``k``-th block of
        consecutive rows of the batch (first axis), each loss depending on its own rows
        only (true of Transformers without batch statistics).
    modules : sequence of torch.nn.Module
        Layers that map the last axis of their input linearly (``torch.nn.Linear``, or
        Hugging Face's ``Conv1D``, whose weight is the transpose); a forward hook records
        each one's input ``a`` and output.
    groups : int, keyword-only
        Number of mini-batches (>= 2, dividing the batch).

    Returns
    -------
    FFNGradStats
        Per module (in the order given): see :func:`ffn_grad_stats`.

    Raises
    ------
    TypeError
        ``loss_fn`` not callable, or a non-integer ``groups``.
    ValueError
        ``groups < 2``, no modules, a module that did not run, or a batch that ``groups``
        does not divide.

    Notes
    -----
    The weight gradient of mini-batch ``k`` is ``K Σ_{t∈k} δ_t a_tᵀ``, with ``δ_t`` the
    gradient of the mean loss at the module's output: the norms of the transposed
    weight (``Conv1D``) are the same. Used by the chapter "A real Transformer"
    (``book/real-transformer.md``) for its own model and for Hugging Face's BERT and GPT-2.
    """
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable; got {type(loss_fn).__name__}")
    groups = check_int(groups, "groups", 2)
    modules = list(modules)
    if not modules:
        raise ValueError("modules must name at least one layer")
    acts, outs = {}, {}

    def keep(i):
        def hook(module, args, out):
            acts[i], outs[i] = args[0], out

        return hook

    hooks = [m.register_forward_hook(keep(i)) for i, m in enumerate(modules)]
    try:
        loss = loss_fn()
    finally:
        for h in hooks:
            h.remove()
    if len(outs) != len(modules):
        raise ValueError("a module did not run in loss_fn's forward pass")
    B = outs[0].shape[0]
    if B % groups:
        raise ValueError(f"groups must divide the batch; got {B} sequences and groups={groups}")
    deltas = torch.autograd.grad(loss, [outs[i] for i in range(len(modules))])
    mean_sq, group_sq = [], []
    for i, delta in enumerate(deltas):
        a = acts[i].detach().reshape(groups, -1, acts[i].shape[-1]).double()  # (K, n, fan_in)
        delta = delta.reshape(groups, -1, delta.shape[-1]).double() * groups  # (K, n, fan_out): mini-batch k's own loss
        g = torch.einsum("kni,knj->kij", delta, a)  # (K, fan_out, fan_in): g_k
        mean_sq.append(float(g.mean(0).pow(2).sum()))
        group_sq.append(g.pow(2).sum((1, 2)).numpy())
    mean_sq, group_sq = np.array(mean_sq), np.array(group_sq).T  # (layers,), (K, layers)
    expected_sq = (groups * mean_sq - group_sq.mean(0)) / (groups - 1)
    return FFNGradStats(
        mean_norm=_readonly(np.sqrt(mean_sq)),
        expected_sq=_readonly(expected_sq),
        group_norms=_readonly(np.sqrt(group_sq)),
        groups=groups,
    )


def ffn_grad_stats(model, tokens, *, groups) -> FFNGradStats:
    """The ``W2`` gradient of every layer, mini-batch by mini-batch, in one backward pass.

    Parameters
    ----------
    model : TinyTransformer
        The model (its parameters' ``.grad`` are left untouched).
    tokens : torch.LongTensor, shape (B, T)
        The batch; it is cut into ``groups`` consecutive mini-batches of ``B / groups``
        sequences, each scored with the next-token loss on every position.
    groups : int, keyword-only
        Number of mini-batches (>= 2, dividing ``B``).

    Returns
    -------
    FFNGradStats
        With ``g_k`` the gradient of mini-batch ``k``'s mean loss and ``ḡ`` their mean:
        ``mean_norm = ‖ḡ‖`` (equal to :func:`ffn_grad_norms` on the whole batch),
        ``group_norms[k] = ‖g_k‖`` (equal to :func:`ffn_grad_norms` on mini-batch ``k``) and
        ``expected_sq = (K ‖ḡ‖² − mean_k ‖g_k‖²) / (K − 1)`` with ``K = groups``.

    Raises
    ------
    TypeError
        Not a TinyTransformer, tokens not a 2-D LongTensor, or a non-integer ``groups``.
    ValueError
        ``groups < 2``, ``groups`` not dividing the batch, fewer than 2 positions, or
        tokens outside the vocabulary.

    Notes
    -----
    For independent mini-batches, ``E‖ḡ‖² = ‖E g‖² + tr Σ / K`` and
    ``E‖g_k‖² = ‖E g‖² + tr Σ``, so ``expected_sq`` is unbiased for ``‖E g‖²``, the squared
    norm of the quantity Xiong et al. (2020) plot in their Figure 3, while ``‖ḡ‖`` (the
    norm of a gradient averaged over ``K`` mini-batches) is biased upward by the noise
    ``tr Σ / K``. The gradient of ``W2`` is ``Σ_t δ_t a_tᵀ`` (``a_t`` the FFN's hidden
    activation, ``δ_t`` the loss gradient at its output); each mini-batch's sum is formed
    from one forward and one backward pass over the whole batch
    (:func:`linear_grad_stats`). See the chapter "A real Transformer"
    (``book/real-transformer.md``).
    """
    _check_model(model)
    _check_tokens(tokens, model)
    groups = check_int(groups, "groups", 2)
    if tokens.shape[0] % groups:
        raise ValueError(f"groups must divide the batch; got {tokens.shape[0]} sequences and groups={groups}")
    return linear_grad_stats(lambda: model.loss(tokens), [b.ffn.w2 for b in model.blocks], groups=groups)


def init_model(placement, depth, *, width=64, heads=None, seed=0, init="xavier", sigma=None, mixing=True):
    """A :class:`TinyTransformer` at initialization, with the chapter's variants.

    Parameters
    ----------
    placement : {"post", "pre", "deepnorm"}
        As :class:`TinyTransformer`.
    depth : int
        Number of layers.
    width : int, keyword-only
        Model width ``d``.
    heads : int, keyword-only
        Attention heads; default ``max(4, width // 64)`` (head width 64 from ``d = 256``
        on, as in GPT-2 small and BERT-base).
    seed : int, keyword-only
        Seed of the weights.
    init : {"xavier", "gpt2"}, keyword-only
        As :class:`TinyTransformer`.
    sigma : float, keyword-only
        If given, every weight matrix is then rescaled to ``N(0, sigma²)``
        (:func:`set_normal_init`).
    mixing : bool, keyword-only
        ``False`` restricts every attention head to its own position (the mask is the
        identity): attention then mixes no positions, a control for rank collapse.

    Returns
    -------
    TinyTransformer

    Raises
    ------
    TypeError, ValueError
        As :class:`TinyTransformer` and :func:`set_normal_init`, or a non-bool ``mixing``.

    Notes
    -----
    See the chapter "A real Transformer" (``book/real-transformer.md``).
    """
    width = check_int(width, "width")
    heads = max(4, width // 64) if heads is None else heads
    if not isinstance(mixing, (bool, np.bool_)):
        raise TypeError(f"mixing must be True or False; got {type(mixing).__name__}")
    model = TinyTransformer(placement, depth, width=width, heads=heads, init=init, seed=seed)
    if sigma is not None:
        set_normal_init(model, sigma)
    if not mixing:
        for block in model.blocks:
            block.attn.causal = torch.eye(model.seq_len, dtype=torch.bool)
    return model


def ffn_inputs(model, tokens) -> list:
    """The input of every layer's FFN (what ``W1`` reads) on ``tokens[:, :-1]``, without gradients.

    Parameters
    ----------
    model : TinyTransformer
        The model.
    tokens : torch.LongTensor, shape (B, T)
        As in :func:`ffn_grad_norms` (the last position is only a target).

    Returns
    -------
    list of torch.Tensor
        One ``(B, T - 1, d)`` tensor per layer, input side first: for Post-LN the stream after
        the attention sublayer's LayerNorm, for Pre-LN the FFN's LayerNorm output.

    Raises
    ------
    TypeError, ValueError
        As :func:`ffn_grad_norms`.

    Notes
    -----
    The chapter "A real Transformer" (``book/real-transformer.md``) measures with it how
    alike the positions of a sequence become with depth (rank collapse).
    """
    _check_model(model)
    _check_tokens(tokens, model)
    out = []
    hooks = [b.ffn.w1.register_forward_hook(lambda m, args, o: out.append(args[0].detach())) for b in model.blocks]
    try:
        with torch.no_grad():
            model(tokens[:, :-1])
    finally:
        for h in hooks:
            h.remove()
    return out


def init_profile(placement, depth, *, width=64, heads=None, seed=0, init="xavier", sigma=None, mixing=True,
                 batch=128, groups=8) -> FFNGradStats:
    """Build a model at initialization and measure its ``W2`` gradients on its own seeded batch.

    Parameters
    ----------
    placement, depth, width, heads, seed, init, sigma, mixing
        The model: see :func:`init_model`.
    batch, groups : int, keyword-only
        The batch, ``reversal_task(batch, rng=default_rng([seed, 7]))``, cut into ``groups``
        mini-batches of ``batch / groups`` sequences.

    Returns
    -------
    FFNGradStats
        :func:`ffn_grad_stats` of the model on the batch.

    Raises
    ------
    TypeError, ValueError
        As :func:`init_model` and :func:`ffn_grad_stats`.

    Notes
    -----
    A plain function of its arguments, so :func:`init_profiles` can run many in worker
    processes. See the chapter "A real Transformer" (``book/real-transformer.md``).
    """
    model = init_model(placement, depth, width=width, heads=heads, seed=seed, init=init, sigma=sigma, mixing=mixing)
    tokens, _ = reversal_task(check_int(batch, "batch"), rng=np.random.default_rng([seed, 7]))
    return ffn_grad_stats(model, tokens, groups=groups)


def _init_profile_job(job: dict) -> FFNGradStats:
    return init_profile(**job)


def init_profiles(jobs, *, processes=2, threads=1) -> list:
    """Run many :func:`init_profile` calls, spread over worker processes.

    Parameters
    ----------
    jobs : iterable of dict
        Keyword arguments of :func:`init_profile`, one dict per call.
    processes : int, keyword-only
        Worker processes (1: in this process).
    threads : int, keyword-only
        torch threads per worker.

    Returns
    -------
    list of FFNGradStats
        In the order of ``jobs``; each equals ``init_profile(**job)`` in a process with
        ``threads`` torch threads. Identical jobs (equal dicts) are run once and share
        their result.

    Raises
    ------
    TypeError
        A job that is not a dict, or non-integer counts.
    ValueError
        ``processes`` or ``threads`` < 1, or a job :func:`init_profile` rejects.

    Notes
    -----
    As :func:`train_grids`: spawned workers with one thread each use two cores better
    than one process with two threads. The jobs are handed out one at a time, the most
    expensive first (depth × width² × batch), so that no worker idles at the end. See
    ``book/real-transformer.md``.
    """
    processes = check_int(processes, "processes")
    threads = check_int(threads, "threads")
    jobs = list(jobs)
    for j in jobs:
        if not isinstance(j, dict):
            raise TypeError(f"each job must be a dict of init_profile keyword arguments; got {type(j).__name__}")
    keys = [tuple(sorted(j.items())) for j in jobs]
    distinct = list(dict.fromkeys(keys))  # identical jobs run once
    todo = [dict(k) for k in distinct]
    if processes == 1 or len(todo) <= 1:
        done = [init_profile(**j) for j in todo]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        def cost(j):  # a pass costs about depth × width² × batch: hand out the longest jobs first
            return j.get("depth", 1) * j.get("width", 64) ** 2 * j.get("batch", 128)

        order = sorted(range(len(todo)), key=lambda i: -cost(todo[i]))
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=min(processes, len(todo)), mp_context=ctx, initializer=_worker_threads, initargs=(threads,)
        ) as pool:
            futures = {i: pool.submit(_init_profile_job, todo[i]) for i in order}
            done = [futures[i].result() for i in range(len(todo))]
    result = dict(zip(distinct, done))
    return [result[k] for k in keys]
