//===- AttnMpi.cpp - The collectives of distributed attention over MPI ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/MpiRuntime/attnmpi.h"

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace {

std::atomic<int64_t> bytesSent{0};

[[noreturn]] void fail(const std::string &message) {
  int rank = -1, initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "attnmpi: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail(std::string(what) + " failed: " + std::string(text, length));
}

int toInt(int64_t value, const char *what) {
  if (value < 0 || value > INT32_MAX)
    fail(std::string(what) + " of " + std::to_string(value) +
         " is outside what one MPI call moves (0 .. 2^31 - 1)");
  return static_cast<int>(value);
}

using Grid = std::array<int64_t, 3>;

/// This rank's coordinates on `grid`, after checking that the grid has as
/// many ranks as MPI_COMM_WORLD.
Grid coordinates(const Grid &grid) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    fail("MPI is not initialised: the program must call MPI_Init before it "
         "runs a distributed attention");
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int64_t ranks = grid[0] * grid[1] * grid[2];
  if (grid[0] < 1 || grid[1] < 1 || grid[2] < 1 || ranks != size)
    fail("the device grid " + std::to_string(grid[0]) + "x" +
         std::to_string(grid[1]) + "x" + std::to_string(grid[2]) + " has " +
         std::to_string(ranks) + " ranks but MPI started " +
         std::to_string(size) + " (mpirun -n must match the grid)");
  return {rank / (grid[1] * grid[2]), rank / grid[2] % grid[1], rank % grid[2]};
}

/// The communicator of this rank's group on `grid` over the axes of
/// `axesMask`, made once: colour = the coordinates off the axes, key = the
/// row-major position over the axes.
MPI_Comm group(const Grid &grid, int64_t axesMask) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, MPI_Comm>
      cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto id = std::make_tuple(grid[0], grid[1], grid[2], axesMask);
  auto found = cache.find(id);
  if (found != cache.end())
    return found->second;
  Grid at = coordinates(grid);
  int64_t colour = 0, key = 0;
  for (int axis = 0; axis < 3; ++axis) {
    if (axesMask & (int64_t(1) << axis))
      key = key * grid[axis] + at[axis];
    else
      colour = colour * grid[axis] + at[axis];
  }
  MPI_Comm comm;
  check(MPI_Comm_split(MPI_COMM_WORLD, toInt(colour, "colour"),
                       toInt(key, "key"), &comm),
        "MPI_Comm_split");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  cache.emplace(id, comm);
  return comm;
}

void *pointer(int64_t address) { return reinterpret_cast<void *>(address); }

/// MPI_Allgather and MPI_Alltoall: every member of the group sends `count`
/// bytes to each other member.
using Exchange = int (*)(const void *, int, MPI_Datatype, void *, int,
                         MPI_Datatype, MPI_Comm);

void exchangeInGroup(const Grid &grid, int64_t axesMask, int64_t send,
                     int64_t recv, int64_t bytes, const char *name,
                     Exchange exchange) {
  MPI_Comm comm = group(grid, axesMask);
  int members = 0;
  MPI_Comm_size(comm, &members);
  int count = toInt(bytes, name);
  check(exchange(pointer(send), count, MPI_BYTE, pointer(recv), count, MPI_BYTE,
                 comm),
        name);
  bytesSent += bytes * (members - 1);
}

} // namespace

extern "C" {

void attnmpi_all_gather(int64_t g0, int64_t g1, int64_t g2, int64_t axesMask,
                        int64_t send, int64_t recv, int64_t bytes) {
  exchangeInGroup({g0, g1, g2}, axesMask, send, recv, bytes, "MPI_Allgather",
                  MPI_Allgather);
}

void attnmpi_all_to_all(int64_t g0, int64_t g1, int64_t g2, int64_t axesMask,
                        int64_t send, int64_t recv, int64_t bytes) {
  exchangeInGroup({g0, g1, g2}, axesMask, send, recv, bytes, "MPI_Alltoall",
                  MPI_Alltoall);
}

void attnmpi_shift(int64_t g0, int64_t g1, int64_t g2, int64_t axis,
                   int64_t offset, int64_t send, int64_t recv, int64_t bytes) {
  Grid grid{g0, g1, g2};
  if (axis < 0 || axis > 2)
    fail("shift along grid axis " + std::to_string(axis) +
         ": a grid has axes 0 .. 2");
  MPI_Comm comm = group(grid, int64_t(1) << axis);
  int members = 0, position = 0;
  MPI_Comm_size(comm, &members);
  MPI_Comm_rank(comm, &position);
  int64_t shift = ((offset % members) + members) % members;
  int to = static_cast<int>((position + shift) % members);
  int from = static_cast<int>((position + members - shift) % members);
  int count = toInt(bytes, "a shifted buffer");
  check(MPI_Sendrecv(pointer(send), count, MPI_BYTE, to, /*tag=*/0,
                     pointer(recv), count, MPI_BYTE, from, /*tag=*/0, comm,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  if (to != position)
    bytesSent += bytes;
}

int64_t attnmpi_bytes_sent(void) { return bytesSent; }

void attnmpi_reset_bytes_sent(void) { bytesSent = 0; }

} // extern "C"
