"""Regenerate the bundled demo files in ztviewer/resources/samples/ (deterministic: fixed seeds).

    python scripts/make_samples.py

- tiny-llama.zt: a model-like zTensor v1.0 checkpoint (dotted names, attributes, crc32c digests, an outlier)
- sparse-graphs.zt: sparse CSR / COO tensors (a banded matrix, a random graph, a 3-D COO)
- vision-encoder.safetensors: safetensors with __metadata__, float16 / bfloat16 / int64 tensors
- smooth-field.blz: a rank-4 tensor train of a smooth 4-D function (BLZ1)
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays  # noqa: E402

OUT = ROOT / "ztviewer" / "resources" / "samples"


def bfloat16_bits(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def tiny_llama(rng: np.random.Generator) -> None:
    hidden, vocab, ffn = 64, 320, 128
    arrays: dict = {"model.embed_tokens.weight": (rng.standard_normal((vocab, hidden)) * 0.02).astype(np.float32)}
    for layer in range(4):
        p = f"model.layers.{layer}"
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            arrays[f"{p}.self_attn.{proj}.weight"] = (rng.standard_normal((hidden, hidden)) / 8).astype(np.float16)
        arrays[f"{p}.mlp.gate_proj.weight"] = (rng.standard_normal((ffn, hidden)) / 8).astype(np.float16)
        arrays[f"{p}.mlp.up_proj.weight"] = (rng.standard_normal((ffn, hidden)) / 8).astype(np.float16)
        arrays[f"{p}.mlp.down_proj.weight"] = (rng.standard_normal((hidden, ffn)) / 11).astype(np.float16)
        arrays[f"{p}.input_layernorm.weight"] = (1 + 0.05 * rng.standard_normal(hidden)).astype(np.float32)
    arrays["model.layers.2.mlp.down_proj.weight"][5, 17] = np.float16(60.0)  # an outlier worth finding
    arrays["model.norm.weight"] = np.ones(hidden, np.float32)
    arrays["lm_head.weight"] = (rng.standard_normal((vocab, hidden)) * 0.02).astype(np.float32)
    save_arrays(OUT / "tiny-llama.zt", arrays, "zt", digest="crc32c", attributes={
        "license": "Apache-2.0", "description": "A 4-layer toy transformer for the ztviewer demo",
        "framework": "PyTorch", "model_name": "tiny-llama-demo", "created_at": "2026-11-21T00:00:00Z"})


def sparse_graphs(rng: np.random.Generator) -> None:
    n = 200
    band = np.zeros((n, n), np.float32)
    for k in range(-3, 4):
        band += np.diag(np.full(n - abs(k), 4.0 - abs(k), np.float32), k)
    rows, cols = np.nonzero(band)
    indptr = np.searchsorted(rows, np.arange(n + 1)).astype(np.uint64)
    banded = SparseArray("sparse_csr", (n, n), band[rows, cols], indices=cols.astype(np.uint64), indptr=indptr)
    m, edges = 500, 3000
    flat = np.unique(rng.integers(0, m * m, edges))
    g_rows, g_cols = np.divmod(flat, m)
    graph = SparseArray("sparse_coo", (m, m), rng.random(flat.size).astype(np.float64),
                        coords=np.stack([g_rows, g_cols]).astype(np.uint64))
    flat3 = np.unique(rng.integers(0, 20 * 30 * 40, 400))
    coords3 = np.stack(np.unravel_index(flat3, (20, 30, 40))).astype(np.uint64)
    volume = SparseArray("sparse_coo", (20, 30, 40), rng.integers(1, 100, flat3.size).astype(np.int32),
                         coords=coords3)
    save_arrays(OUT / "sparse-graphs.zt", {"banded_laplacian": banded, "random_graph": graph,
                                            "voxel_counts": volume},
                "zt", attributes={"description": "Sparse CSR / COO tensors for the ztviewer demo"})


def vision_encoder(rng: np.random.Generator) -> None:
    y, x = np.mgrid[-1:1:96j, -1:1:96j]
    arrays = {
        "patch_embed.proj.weight": (rng.standard_normal((48, 3, 8, 8)) * 0.1).astype(np.float16),
        "pos_embed": np.sin(np.arange(64)[:, None] / 10.0 ** (np.arange(48)[None, :] / 12)).astype(np.float32),
        "blocks.0.attn.qkv.weight": (bfloat16_bits(rng.standard_normal((144, 48)) * 0.1), "bfloat16"),
        "blocks.0.norm1.weight": np.ones(48, np.float32),
        "gabor_filter": (np.exp(-(x**2 + y**2) * 4) * np.cos(12 * x)).astype(np.float32),
        "checkerboard": (np.indices((16, 16)).sum(axis=0) % 2).astype(np.float32),
        "class_token_ids": np.arange(10, dtype=np.int64),
        "attention_mask": np.tril(np.ones((12, 12), bool)),
    }
    save_arrays(OUT / "vision-encoder.safetensors", arrays, "safetensors",
                attributes={"format": "pt", "architecture": "toy-vit", "license": "MIT"})


def smooth_field() -> None:
    dims = (12, 10, 8, 6)
    grids = [np.linspace(0, 1, d) for d in dims]
    # sin(a + b + c + d) has exact TT rank 2: sin(u + v) = sin u cos v + cos u sin v
    cores = []
    for k, g in enumerate(grids):
        s, c = np.sin(2 * np.pi * g), np.cos(2 * np.pi * g)
        if k == 0:
            core = np.stack([s, c], axis=-1)[None, :, :]
        elif k == len(grids) - 1:
            core = np.stack([c, s], axis=0)[:, :, None]
        else:
            core = np.zeros((2, g.size, 2))
            core[0, :, 0], core[0, :, 1], core[1, :, 0], core[1, :, 1] = c, -s, s, c
        cores.append(np.ascontiguousarray(core, dtype=np.float64))
    save_arrays(OUT / "smooth-field.blz", {"smooth-field": TensorTrainArray(cores)}, "blz")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261121)
    tiny_llama(rng)
    sparse_graphs(rng)
    vision_encoder(rng)
    smooth_field()
    for path in sorted(OUT.iterdir()):
        print(f"{path.relative_to(ROOT)}  {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
