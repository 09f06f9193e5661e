#!/usr/bin/env bash
# Reproduces the sample task's experiment end to end (EXP-Bench's reproduce_exp_bench.sh).
set -euo pipefail
cd "$(dirname "$0")"
python3 experiments/temperature_scaling.py
