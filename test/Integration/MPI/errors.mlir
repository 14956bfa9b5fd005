// REQUIRES: mpi
// A distributed run that cannot go on ends every rank with a clear error and
// a non-zero exit, never a hang (mpirun is bounded by %mpirun's timeout).

// A grid that does not match mpirun -n.
// RUN: not %mpirun -n 3 attn-run --attention2d=2,2 --seq-q=8 --head-dim=8 2>&1 | FileCheck %s --check-prefix=GRID
// GRID: error: rank {{[0-2]}}: the attention is distributed over 4 ranks (a 2x2 grid) but mpirun started 3: run it with mpirun -n 4

// Without mpirun: one rank of a ring of two.
// RUN: not attn-run --ring=2 --seq-q=8 --head-dim=8 2>&1 | FileCheck %s --check-prefix=ALONE
// ALONE: error: rank 0: the attention is distributed over 2 ranks (a ring of 2) but mpirun started 1

// An attention attn-distribute cannot distribute fails on every rank.
// RUN: not %mpirun -n 4 attn-run --attention2d=2,2 --mask=bool --seq-q=8 --head-dim=8 2>&1 | FileCheck %s --check-prefix=MASK
// MASK: a distributed attention cannot take a mask operand yet; express the mask as a score region

// Two partitions at once.
// RUN: not attn-run --ring=2 --splits=2 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: choose one partition

// Zig-zag shards only a distributed attention.
// RUN: not attn-run --zigzag 2>&1 | FileCheck %s --check-prefix=ZIGZAG
// ZIGZAG: zigzag shards a distributed attention: add attention2d or ring
