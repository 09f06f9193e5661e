"""Synthetic two-class data: two overlapping Gaussian blobs in 2-D, seeded."""
import random


def make_dataset(n, seed, separation=1.2, noise=1.0):
    """Return (xs, ys): n points [x1, x2] and labels 0/1, half of each class."""
    rng = random.Random(seed)
    xs, ys = [], []
    for i in range(n):
        y = i % 2
        centre = separation if y == 1 else -separation
        xs.append([rng.gauss(centre, noise), rng.gauss(centre * 0.5, noise)])
        ys.append(y)
    return xs, ys


def splits(seed=0, n_train=40, n_val=500, n_test=2000):
    """Train / validation / test splits drawn from the same distribution with different seeds."""
    return (
        make_dataset(n_train, seed),
        make_dataset(n_val, seed + 1),
        make_dataset(n_test, seed + 2),
    )
