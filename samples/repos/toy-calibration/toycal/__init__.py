"""toycal: a tiny calibration study in pure Python."""
