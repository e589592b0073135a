#!/usr/bin/env python3
"""PyTorch's scaled-dot-product attention backends at kbench's attention shapes: a
peer measurement outside kbench, for sanity checks of the vendor row. Times each
backend with CUDA events (median of 50 after 10 warm-ups, fresh bf16 inputs in
kbench's layout [batch][heads][seq][dim]) and prints TFLOP/s counted as kbench
counts them (4 * b * h * s^2 * d, half when causal).
Usage: python3 bench/attention_torch.py"""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

SHAPES = [(4, 16, 4096, 128), (4, 32, 4096, 64), (1, 16, 16384, 128)]
BACKENDS = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]


def time_ms(fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def main():
    print(torch.cuda.get_device_name(), "torch", torch.__version__,
          "cudnn", torch.backends.cudnn.version())
    for (b, h, s, d) in SHAPES:
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for causal in (0, 1):
            flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            for name, be in BACKENDS:
                try:
                    with sdpa_kernel(be):
                        ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal)))
                    print(f"b={b} h={h} s={s} d={d} causal={causal} {name:6s} {ms*1e3:9.1f} us "
                          f"{flops / ms / 1e9:6.1f} TFLOP/s")
                except RuntimeError as e:
                    print(f"b={b} h={h} s={s} d={d} causal={causal} {name:6s} unavailable: {e}")


if __name__ == "__main__":
    main()
