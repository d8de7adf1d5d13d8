"""Fuzz targets for every grammask surface; run them with `python fuzz/run.py`."""
