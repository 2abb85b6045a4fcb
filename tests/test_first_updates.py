"""DeepNet's model update by parameter group (normlib.transformer.first_update_sizes, first_updates).

Oracles: the one-group-at-a-time :func:`first_update_norm` (a step on a copy with torch's own
optimizers), the definition of a least-squares slope, and the invariances the functions promise
(the model is left alone; the numbers do not depend on the worker processes).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from normlib.transformer import (
    UPDATE_GROUPS,
    TinyTransformer,
    first_update_norm,
    first_update_sizes,
    first_updates,
    reversal_task,
)

TINY = dict(width=8, heads=2, vocab=5, seq_len=4)
ALL_PAIRS = [(o, g) for o in ("sgd", "adam") for g in UPDATE_GROUPS]


def _model(placement="deepnorm", depth=3, seed=0):
    return TinyTransformer(placement, depth, seed=seed, **TINY).double()


@pytest.mark.parametrize("placement", ["post", "pre", "deepnorm"])
def test_every_pair_equals_the_one_group_step_of_torch_optimizers(placement):
    model = _model(placement)
    tokens, mask = reversal_task(4, seq_len=4, vocab=5, rng=1)
    lrs = {"sgd": 1e-3, "adam": 1e-4}
    got = first_update_sizes(model, tokens, measure=ALL_PAIRS, lrs=lrs, mask=mask)
    for (opt, group), value in got.items():
        want = first_update_norm(model, tokens, lr=lrs[opt], optimizer=opt, mask=mask, params=UPDATE_GROUPS[group])
        assert value == pytest.approx(want, rel=1e-9), (opt, group)


def test_the_model_is_left_as_it_was_and_its_grads_untouched():
    model = _model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    tokens, _ = reversal_task(4, seq_len=4, vocab=5, rng=2)
    first_update_sizes(model, tokens, measure=ALL_PAIRS, lrs={"sgd": 1e-2, "adam": 1e-2})
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert all(p.grad is None for p in model.parameters())


def test_groups_select_the_weights_deepnet_scales_and_the_layernorms():
    names = [n for n, _ in _model("pre", depth=2).named_parameters()]
    branch = {n for n in names if UPDATE_GROUPS["branch"](n)}
    assert branch == {f"blocks.{i}.{m}.weight" for i in range(2) for m in ("attn.v", "attn.o", "ffn.w1", "ffn.w2")}
    ln = {n for n in names if UPDATE_GROUPS["layernorm"](n)}
    assert ln == {f"blocks.{i}.{m}.{w}" for i in range(2) for m in ("ln1", "ln2") for w in ("weight", "bias")}
    assert all(UPDATE_GROUPS["all"](n) for n in names)


def test_sgd_sizes_are_linear_in_the_rate_and_adam_sizes_sign_like():
    model = _model()
    tokens, _ = reversal_task(4, seq_len=4, vocab=5, rng=3)
    a = first_update_sizes(model, tokens, measure=ALL_PAIRS, lrs={"sgd": 1e-6, "adam": 1e-5})
    b = first_update_sizes(model, tokens, measure=ALL_PAIRS, lrs={"sgd": 2e-6, "adam": 2e-5})
    for pair in ALL_PAIRS:
        assert b[pair] / a[pair] == pytest.approx(2.0, rel=1e-4), pair


def test_first_updates_rows_are_the_single_model_measurements_and_slopes_are_least_squares():
    depths, seeds = (1, 2, 4), (0, 3)
    res = first_updates(["post", "deepnorm"], depths, seeds=seeds, width=8, heads=2, batch=3, processes=1)
    assert set(res) == {"post", "deepnorm"}
    r = res["deepnorm"]
    assert r.depths == depths and r.seeds == seeds and r.lrs["sgd"] == 1e-6
    for i, s in enumerate(seeds):
        tokens, _ = reversal_task(3, rng=np.random.default_rng([s, 9]))
        for j, L in enumerate(depths):
            want = first_update_sizes(TinyTransformer("deepnorm", L, width=8, heads=2, seed=s).double(), tokens,
                                      measure=[("adam", "branch")], lrs={"adam": 1e-5})["adam", "branch"] / 1e-5
            assert r.sizes["adam", "branch"][i, j] == pytest.approx(want, rel=1e-12)
    y = np.log(r.sizes["sgd", "all"])
    want = [np.polyfit(np.log(depths), row, 1)[0] for row in y]
    np.testing.assert_allclose(r.slopes("sgd", "all"), want, rtol=1e-10)
    assert r.slopes("sgd", "all").mean() == pytest.approx(np.polyfit(np.log(depths), y.mean(axis=0), 1)[0], rel=1e-10)
    assert not r.sizes["sgd", "all"].flags.writeable
    with pytest.raises(KeyError):
        r.slopes("adam", "layernorm")  # not measured by default
    with pytest.raises(TypeError):
        r.sizes["sgd", "all"] = None


def test_worker_processes_give_the_same_numbers():
    kw = dict(seeds=(1, 2), width=8, heads=2, batch=2)
    here = first_updates(["post"], (1, 2), processes=1, **kw)["post"]
    there = first_updates(["post"], (1, 2), processes=2, **kw)["post"]
    for pair in here.sizes:
        np.testing.assert_allclose(there.sizes[pair], here.sizes[pair], rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        (dict(measure=[("lion", "all")]), ValueError, "optimizer"),
        (dict(measure=[("sgd", "heads")]), ValueError, "group"),
        (dict(measure=[]), ValueError, "at least one"),
        (dict(measure=[("sgd", "all"), ("sgd", "all")]), ValueError, "twice"),
        (dict(measure=[("sgd",)]), ValueError, "pairs"),
        (dict(lrs={"adam": 1e-3}), ValueError, "no learning rate"),
        (dict(lrs={"sgd": 0.0}), ValueError, "lrs"),
        (dict(lrs=[1e-3]), TypeError, "map"),
    ],
)
def test_bad_input_to_first_update_sizes(kwargs, exc, msg):
    model = _model()
    tokens, _ = reversal_task(2, seq_len=4, vocab=5, rng=0)
    args = dict(measure=[("sgd", "all")], lrs={"sgd": 1e-3}) | kwargs
    with pytest.raises(exc, match=msg):
        first_update_sizes(model, tokens, **args)
    with pytest.raises(TypeError, match="TinyTransformer"):
        first_update_sizes(torch.nn.Linear(2, 2), tokens, measure=[("sgd", "all")], lrs={"sgd": 1e-3})


@pytest.mark.parametrize(
    "args, kwargs, exc, msg",
    [
        ((["middle"], (1,)), {}, ValueError, "placement"),
        (([], (1,)), {}, ValueError, "at least one placement"),
        ((["post"], (2, 1)), {}, ValueError, "increasing"),
        ((["post"], ()), {}, ValueError, "increasing"),
        ((["post"], (1,)), dict(seeds=()), ValueError, "seed"),
        ((["post"], (1,)), dict(seeds=(-1,)), ValueError, "seed"),
        ((["post"], (1.5,)), {}, TypeError, "depth"),
        ((["post"], (1,)), dict(processes=0), ValueError, "processes"),
    ],
)
def test_bad_input_to_first_updates(args, kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        first_updates(*args, **({"seeds": (0,), "processes": 1} | kwargs))
