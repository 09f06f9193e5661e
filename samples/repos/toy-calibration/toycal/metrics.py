"""Accuracy, negative log-likelihood and expected calibration error (ECE)."""
import math

from toycal.model import sigmoid


def accuracy(logits, ys):
    return sum((z > 0) == (y == 1) for z, y in zip(logits, ys)) / len(ys)


def nll(logits, ys, temperature=1.0):
    total = 0.0
    for z, y in zip(logits, ys):
        p = min(max(sigmoid(z / temperature), 1e-12), 1 - 1e-12)
        total -= math.log(p) if y == 1 else math.log(1 - p)
    return total / len(ys)


def ece(logits, ys, temperature=1.0, n_bins=15):
    """Expected calibration error of the predicted class's confidence, equal-width bins."""
    bins = [[0, 0.0, 0.0] for _ in range(n_bins)]  # count, sum confidence, sum correct
    for z, y in zip(logits, ys):
        p = sigmoid(z / temperature)
        conf = max(p, 1 - p)
        correct = 1.0 if (p > 0.5) == (y == 1) else 0.0
        b = min(int(conf * n_bins), n_bins - 1)
        bins[b][0] += 1
        bins[b][1] += conf
        bins[b][2] += correct
    n = len(ys)
    return sum(abs(s_conf - s_corr) for c, s_conf, s_corr in bins if c) / n
