"""Builds the optional C fast path (ztviewer.codec._accel); everything else is configured in pyproject.toml.

``optional=True``: without a C compiler the install still succeeds and ztviewer runs its pure-Python paths.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("ztviewer.codec._accel", ["ztviewer/codec/_accel.c"], optional=True)])
