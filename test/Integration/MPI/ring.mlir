// REQUIRES: mpi
// Ring attention under mpirun on the CPU, on the cases of attention2d.mlir:
// every rank passes its K and V shards on P - 1 times, so it sends
// (P - 1) x (its K and V shard bytes).

// RUN: %mpirun -n 1 attn-run --ring=1 --causal --seq-q=9 --head-dim=8 --lse | FileCheck %s --check-prefix=ONE
// ONE: ring attention over 1 ranks, shards of 9 query and 9 key/value tokens
// ONE: bytes sent per rank: 0 (model 0: exact)
// ONE: check LSE: {{.*}} PASS
// ONE: rank 0 of 1: PASS

// Causal, GQA, Sq = Sk = 32: 3 x 1024.
// RUN: %mpirun -n 4 attn-run --ring=4 --causal --heads=4 --kv-heads=2 --seq-q=32 --head-dim=8 --lse | FileCheck %s --check-prefix=FOUR
// FOUR: ring attention over 4 ranks, shards of 8 query and 8 key/value tokens{{$}}
// FOUR: bytes sent per rank: 3072 3072 3072 3072 (model 3072: exact)
// FOUR: check O  : {{.*}} PASS
// FOUR: check LSE: {{.*}} PASS
// FOUR-COUNT-4: rank {{[0-3]}} of 4: PASS

// Causal, Sq = 25 != Sk = 31, neither divisible by 6, bf16: 5 x 384.
// RUN: %mpirun -n 6 attn-run --ring=6 --causal --heads=2 --seq-q=25 --seq-k=31 --head-dim=8 --lse --dtype=bf16 | FileCheck %s --check-prefix=SIX
// SIX: shards of 5 query and 6 key/value tokens (the last padded)
// SIX: bytes sent per rank: 1920 1920 1920 1920 1920 1920 (model 1920: exact)
// SIX: check O  : {{.*}} PASS
// SIX: check LSE: {{.*}} PASS
// SIX-COUNT-6: rank {{[0-5]}} of 6: PASS

// Not causal, softcap, MQA, 9 ranks: 8 x 320.
// RUN: %mpirun -n 9 attn-run --ring=9 --softcap=5 --heads=3 --kv-heads=1 --seq-q=40 --head-dim=8 --lse | FileCheck %s --check-prefix=NINE
// NINE: bytes sent per rank: 2560 2560 2560 2560 2560 2560 2560 2560 2560 (model 2560: exact)
// NINE: check O  : {{.*}} PASS
// NINE-COUNT-9: rank {{[0-8]}} of 9: PASS

// Zig-zag shards: every rank computes the same number of causal scores
// (a contiguous ring of 4 ranges from 136 to 904).
// RUN: %mpirun -n 4 attn-run --ring=4 --causal --heads=2 --seq-q=64 --head-dim=8 | FileCheck %s --check-prefix=SKEWED
// SKEWED: work per rank: 136 to 904 visible scores per (batch, head), the busiest 1.74 x the mean
// RUN: %mpirun -n 4 attn-run --ring=4 --zigzag --causal --heads=2 --seq-q=64 --head-dim=8 --lse | FileCheck %s --check-prefix=ZIGZAG
// ZIGZAG: work per rank: 520 to 520 visible scores per (batch, head), the busiest 1.00 x the mean (zig-zag shards)
// ZIGZAG: check O  : {{.*}} PASS
// ZIGZAG: check LSE: {{.*}} PASS
// ZIGZAG-COUNT-4: rank {{[0-3]}} of 4: PASS
// Sq != Sk, not divisible, window, GQA.
// RUN: %mpirun -n 3 attn-run --ring=3 --zigzag --causal --window=5,0 --heads=2 --kv-heads=1 --seq-q=10 --seq-k=23 --head-dim=8 --lse | FileCheck %s --check-prefix=ZIGZAG-ODD
// ZIGZAG-ODD: shards of 4 query and 8 key/value tokens (the last padded)
// ZIGZAG-ODD: bytes sent per rank: 1024 1024 1024 (model 1024: exact)
// ZIGZAG-ODD: check O  : {{.*}} PASS
// ZIGZAG-ODD: check LSE: {{.*}} PASS
