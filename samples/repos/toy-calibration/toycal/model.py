"""Logistic regression trained by full-batch gradient descent (no regularisation)."""
import math


def sigmoid(z):
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class LogisticRegression:
    def __init__(self, n_features=2):
        self.w = [0.0] * n_features
        self.b = 0.0

    def logit(self, x):
        return sum(wi * xi for wi, xi in zip(self.w, x)) + self.b

    def fit(self, xs, ys, lr=0.5, epochs=3000):
        n = len(xs)
        for _ in range(epochs):
            gw = [0.0] * len(self.w)
            gb = 0.0
            for x, y in zip(xs, ys):
                err = sigmoid(self.logit(x)) - y
                for j, xj in enumerate(x):
                    gw[j] += err * xj
                gb += err
            self.w = [wi - lr * g / n for wi, g in zip(self.w, gw)]
            self.b -= lr * gb / n
        return self

    def logits(self, xs):
        return [self.logit(x) for x in xs]
