"""A logistic regression fitted by gradient descent on standardised features (numpy only).

The trainers of plait's small shipped models (:mod:`plait.devtools.pair_model`,
:mod:`plait.devtools.rerank_model`) fit with it; the models themselves are a few weights read
by stdlib arithmetic, so fitting them needs no learning library.
"""

from __future__ import annotations

import numpy as np


def fit_logistic(
    x: np.ndarray, y: np.ndarray, *, l2: float, steps: int, rate: float
) -> tuple[np.ndarray, float]:
    """Weights and bias on the raw features, fitted on the standardised ones.

    ``x``: one row of features per example; ``y``: 1 for a positive, 0 otherwise; ``l2``
    weighs the penalty on the standardised weights (the bias is not penalised).
    """
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    weights, bias = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        error = 1 / (1 + np.exp(-(z @ weights + bias))) - y
        weights -= rate * (z.T @ error / len(y) + l2 * weights)
        bias -= rate * float(error.mean())
    raw = weights / scale
    return raw, bias - float(raw @ mean)


__all__ = ["fit_logistic"]
