/*===- attnmpi.h - The collectives of distributed attention over MPI -----===*\
|*                                                                            *|
|* Part of the attn-mlir project, under the Apache License v2.0 with LLVM     *|
|* Exceptions. See LICENSE for license information.                           *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* libattnmpi: what attn-lower-collectives calls for the shard dialect's      *|
|* collectives that MLIR does not lower to MPI itself. The ranks of           *|
|* MPI_COMM_WORLD form a grid (at most 3 axes, sizes g0 x g1 x g2, row-major: *|
|* the layout convert-shard-to-mpi gives shard.process_multi_index). A group  *|
|* is the ranks that differ only on the axes of `axes_mask` (bit a: axis a), *|
|* ordered row-major over those axes; its communicator is made once with      *|
|* MPI_Comm_split and cached. Buffers are contiguous; sizes are in bytes.     *|
|*                                                                            *|
|* MPI must be initialised by the program. Any error (MPI not initialised, a *|
|* grid that does not match the number of ranks, an MPI failure) prints a     *|
|* message naming it and ends every rank with MPI_Abort: a distributed        *|
|* program never hangs on a rank that failed.                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_MPIRUNTIME_ATTNMPI_H
#define ATTN_MPIRUNTIME_ATTNMPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every rank of the group receives the `bytes` of every member, in group
   order: recv holds n * bytes. */
void attnmpi_all_gather(int64_t g0, int64_t g1, int64_t g2, int64_t axes_mask,
                        int64_t send, int64_t recv, int64_t bytes);

/* Member k of the group receives piece k (`bytes` each) of every member's
   send buffer, in group order: send and recv hold n * bytes. */
void attnmpi_all_to_all(int64_t g0, int64_t g1, int64_t g2, int64_t axes_mask,
                        int64_t send, int64_t recv, int64_t bytes);

/* Along grid axis `axis`, the rank at coordinate c sends its `bytes` to the
   rank at (c + offset) mod n and receives those of (c - offset) mod n. */
void attnmpi_shift(int64_t g0, int64_t g1, int64_t g2, int64_t axis,
                   int64_t offset, int64_t send, int64_t recv, int64_t bytes);

/* Bytes this rank has sent to other ranks in the collectives above since the
   program started or the last reset (what it receives is the same in all of
   them, being symmetric). */
int64_t attnmpi_bytes_sent(void);
void attnmpi_reset_bytes_sent(void);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_MPIRUNTIME_ATTNMPI_H */
