"""Smooth vs binned reliability diagrams on oscillatory synthetic data (hand-made for the labelled set)."""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import relplot

relplot.config.use_tex_fonts = False

n_samples = 10000
preds = np.random.rand(n_samples)
labels = (np.random.rand(n_samples) > 1 - (preds + 0.2 * np.sin(2 * np.pi * preds))) * 1

print("smECE:", relplot.smECE(preds, labels))
fig1 = relplot.rel_diagram(preds, labels)
plt.savefig("smooth.png")
fig2 = relplot.rel_diagram_binned(preds, labels)
plt.savefig("binned.png")
