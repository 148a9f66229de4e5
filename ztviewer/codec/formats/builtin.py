"""The built-in formats, in detection order: the one list every other list of formats is derived from.

Each entry sniffs with :mod:`.magic` (no reader imported) and names its reader as ``"module:function"``, imported
on the first read. safetensors' sniff (a length, then ``{``) is the weakest test: formats with a magic come first.
"""
from __future__ import annotations

from ..format_spec import FormatSpec, head_sniffer, tail_sniffer
from .magic import ZT_V2_FORMAT, sniff_blz, sniff_safetensors, sniff_zt, sniff_zt_v2, sniff_zt_v2_tail

_V2 = "ztviewer.codec.formats.zt_v2"
_ZTENSOR = "zTensor file"

BUILTIN_FORMATS: tuple[FormatSpec, ...] = (
    FormatSpec(name=ZT_V2_FORMAT, description="zTensor v2 (ztensor 2.x)", extensions=(".zt",),
               mime="application/x-ztensor", sniff=head_sniffer(sniff_zt_v2), read=f"{_V2}:read",
               sniff_damaged=tail_sniffer(sniff_zt_v2_tail), deep_check=f"{_V2}:deep_checks",
               content_digest=f"{_V2}:content_digest", tensor_content_digest=f"{_V2}:object_content_digest",
               targets=("zt-v2",), file_type="ztensor", file_type_description=_ZTENSOR,
               mime_magic=('<match type="string" offset="0" value="\\211ZT2\\r\\n\\032\\n"/>',),
               mime_magic_priority=80),
    FormatSpec(name="zt", description="zTensor 0.1 / 1.x", extensions=(".zt",), mime="application/x-ztensor",
               sniff=head_sniffer(sniff_zt), read="ztviewer.codec.formats.zt:read",
               signature="a zTensor file starts with 'ZTEN0001', 'ZTEN1000' or the v2 magic",
               targets=("zt-v1.0", "zt-v0.1", "zt-objects"), file_type="ztensor", file_type_description=_ZTENSOR,
               mime_magic=('<match type="string" offset="0" value="ZTEN0001"/>',
                           '<match type="string" offset="0" value="ZTEN1000"/>'), mime_magic_priority=80),
    FormatSpec(name="safetensors", description="Hugging Face safetensors", extensions=(".safetensors",),
               mime="application/x-safetensors", sniff=head_sniffer(sniff_safetensors),
               read="ztviewer.codec.formats.safetensors:read", targets=("safetensors",),
               signature="a safetensors file starts with a u64 header length followed by '{'",
               file_type_description="safetensors file", owner=False,
               mime_magic=("<!-- u64 LE header length below 2^40 (bytes 5-7 zero), then the JSON header's opening "
                           "brace -->",
                           '<match type="string" offset="5" value="\\0\\0\\0">',
                           '  <match type="string" offset="8" value="{"/>',
                           '  <match type="string" offset="8" value=" "/>',
                           "</match>")),
    FormatSpec(name="blz", description="BLZ1 tensor train", extensions=(".blz",),
               mime="application/x-blz-tensor-train", sniff=head_sniffer(sniff_blz),
               read="ztviewer.codec.formats.blz:read", targets=("blz",), signature="a .blz file starts with 'BLZ1'",
               file_type_description="BLZ tensor-train file",
               mime_magic=('<match type="string" offset="0" value="BLZ1"/>',), mime_magic_priority=80),
)
