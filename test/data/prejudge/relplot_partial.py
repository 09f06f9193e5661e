"""Half of the comparison: the data and a smooth diagram only (hand-made for the labelled set)."""
import numpy as np
import relplot as rp

f = np.random.rand(1000)
y = (np.random.rand(1000) < f) * 1
rp.rel_diagram(f, y)
