"""ztviewer's codec core: read, decode, verify and write tensor files. No Qt here."""
from .errors import CodecError
from .model import Component, Problem, Region, Severity, Tensor, TensorFile
from .registry import open_file, read_source

__all__ = ["CodecError", "Component", "Problem", "Region", "Severity", "Tensor", "TensorFile",
           "open_file", "read_source"]
