// REQUIRES: mpi
// The shipped distributed example: a 2x2 ATTENTION2D attention and a 4-rank
// ring, each PASS on every rank with the bytes of the model.
// RUN: %mpirun -n 4 attn-run %attn_src_root/examples/distributed-prefill.mlir | FileCheck %s
// CHECK: @attention2d: B=1 Hq=8 Hkv=2 (GQA 4:1) Sq=1024 Sk=1024 D=64 Dv=64 bf16 causal +lse
// CHECK: ATTENTION2D on a 2x2 grid over 4 ranks, shards of 256 query and 256 key/value tokens
// CHECK: bytes sent per rank: 925696 925696 925696 925696 (model 925696: exact)
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: @ring: B=1 Hq=8 Hkv=2 (GQA 4:1) Sq=1024 Sk=1024 D=64 Dv=64 bf16 causal +lse
// CHECK: ring attention over 4 ranks
// CHECK: bytes sent per rank: 393216 393216 393216 393216 (model 393216: exact)
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK-COUNT-4: rank {{[0-3]}} of 4: PASS
