// REQUIRES: mpi
// ATTENTION2D under mpirun on the CPU: each rank compiles its own program
// (attn-distribute), rank 0 checks the gathered O and LSE against the float64
// reference, and the bytes every rank sends must equal the traffic model
// exactly (the values below are worked out by hand from ALGORITHMS.md's
// formula: (C-1) Q shards + (R-1) K and V shards + (C-1) f32 (O, LSE) pieces).

// One rank: the program is the local attention.
// RUN: %mpirun -n 1 attn-run --attention2d=1,1 --causal --heads=2 --seq-q=16 --head-dim=8 --lse | FileCheck %s --check-prefix=ONE
// ONE: ATTENTION2D on a 1x1 grid over 1 ranks, shards of 16 query and 16 key/value tokens
// ONE: bytes sent per rank: 0 (model 0: exact)
// ONE: check O  : {{.*}} PASS
// ONE: check LSE: {{.*}} PASS
// ONE: rank 0 of 1: PASS

// 2x2, causal, GQA, Sq = Sk = 32: 1024 (Q) + 1024 (K, V) + 1152 (O, LSE).
// RUN: %mpirun -n 4 attn-run --attention2d=2,2 --causal --heads=4 --kv-heads=2 --seq-q=32 --head-dim=8 --lse | FileCheck %s --check-prefix=SQUARE
// SQUARE: shards of 8 query and 8 key/value tokens{{$}}
// SQUARE: bytes sent per rank: 3200 3200 3200 3200 (model 3200: exact)
// SQUARE: check O  : {{.*}} PASS
// SQUARE: check LSE: {{.*}} PASS
// SQUARE-DAG: rank 0 of 4: PASS
// SQUARE-DAG: rank 1 of 4: PASS
// SQUARE-DAG: rank 2 of 4: PASS
// SQUARE-DAG: rank 3 of 4: PASS

// 2x2, not causal, Sq = 8 != Sk = 37 (not divisible: padding keys hidden),
// Dv != D: 128 + 1920 + 272.
// RUN: %mpirun -n 4 attn-run --attention2d=2,2 --heads=2 --seq-q=8 --seq-k=37 --head-dim=8 --value-dim=16 | FileCheck %s --check-prefix=DECODE
// DECODE: shards of 2 query and 10 key/value tokens (the last padded)
// DECODE: bytes sent per rank: 2320 2320 2320 2320 (model 2320: exact)
// DECODE: check O  : {{.*}} PASS
// DECODE-COUNT-4: rank {{[0-3]}} of 4: PASS

// 2x3 (R != C), causal, Sq = 25, Sk = 31, bf16: 320 + 384 + 720.
// RUN: %mpirun -n 6 attn-run --attention2d=2,3 --causal --heads=2 --seq-q=25 --seq-k=31 --head-dim=8 --lse --dtype=bf16 | FileCheck %s --check-prefix=WIDE
// WIDE: ATTENTION2D on a 2x3 grid over 6 ranks, shards of 5 query and 6 key/value tokens (the last padded)
// WIDE: bytes sent per rank: 1424 1424 1424 1424 1424 1424 (model 1424: exact)
// WIDE: check O  : {{.*}} PASS
// WIDE: check LSE: {{.*}} PASS
// WIDE-COUNT-6: rank {{[0-5]}} of 6: PASS

// 3x3, causal with a window and ALiBi through the score region (absolute
// positions on every rank), MQA: 960 + 640 + 1080.
// RUN: %mpirun -n 9 attn-run --attention2d=3,3 --causal --window=6,0 --alibi --heads=3 --kv-heads=1 --seq-q=40 --head-dim=8 --lse | FileCheck %s --check-prefix=NINE
// NINE: bytes sent per rank: 2680 2680 2680 2680 2680 2680 2680 2680 2680 (model 2680: exact)
// NINE: check O  : {{.*}} PASS
// NINE: check LSE: {{.*}} PASS
// NINE-COUNT-9: rank {{[0-8]}} of 9: PASS

// Zig-zag shards balance causal work: the contiguous 2x2 layout leaves rank
// (0, 1) idle (0 scores) and gives rank (1, 0) all of its chunk pair; zig-zag
// gives every rank the same share, and the answer does not change.
// RUN: %mpirun -n 4 attn-run --attention2d=2,2 --causal --heads=2 --seq-q=64 --head-dim=8 --lse | FileCheck %s --check-prefix=SKEWED
// SKEWED: work per rank: 0 to 1024 visible scores per (batch, head), the busiest 1.97 x the mean
// SKEWED: check LSE: {{.*}} PASS
// RUN: %mpirun -n 4 attn-run --attention2d=2,2 --zigzag --causal --heads=2 --seq-q=64 --head-dim=8 --lse | FileCheck %s --check-prefix=ZIGZAG
// ZIGZAG: work per rank: 512 to 528 visible scores per (batch, head), the busiest 1.02 x the mean (zig-zag shards)
// ZIGZAG: bytes sent per rank: 4224 4224 4224 4224 (model 4224: exact)
// ZIGZAG: check O  : {{.*}} PASS
// ZIGZAG: check LSE: {{.*}} PASS
// ZIGZAG-COUNT-4: rank {{[0-3]}} of 4: PASS

// Zig-zag on 2x3 with Sq != Sk, neither divisible (shards of 2 x 3 tokens),
// ALiBi on absolute positions; and on 3x3 with MQA.
// RUN: %mpirun -n 6 attn-run --attention2d=2,3 --zigzag --causal --alibi --heads=2 --seq-q=25 --seq-k=31 --head-dim=8 --lse | FileCheck %s --check-prefix=ZIGZAG-WIDE
// ZIGZAG-WIDE: shards of 6 query and 6 key/value tokens (the last padded)
// ZIGZAG-WIDE: bytes sent per rank: 2400 2400 2400 2400 2400 2400 (model 2400: exact)
// ZIGZAG-WIDE: check O  : {{.*}} PASS
// ZIGZAG-WIDE: check LSE: {{.*}} PASS
// RUN: %mpirun -n 9 attn-run --attention2d=3,3 --zigzag --causal --heads=3 --kv-heads=1 --seq-q=40 --head-dim=8 --lse | FileCheck %s --check-prefix=ZIGZAG-NINE
// ZIGZAG-NINE: check O  : {{.*}} PASS
// ZIGZAG-NINE: check LSE: {{.*}} PASS
// ZIGZAG-NINE-COUNT-9: rank {{[0-8]}} of 9: PASS
