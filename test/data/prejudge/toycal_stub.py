"""An unfinished attempt: trains the model and prints its accuracy, nothing else (hand-made for the labelled set)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from toycal.data import splits
from toycal.metrics import accuracy
from toycal.model import LogisticRegression

(x_train, y_train), _, (x_test, y_test) = splits(0)
m = LogisticRegression().fit(x_train, y_train)
print("accuracy", accuracy(m.logits(x_test), y_test))
