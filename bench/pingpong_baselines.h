// sf_pingpong's baselines: the same round trip 0 -> 1 -> 0 of size bytes
// without starforest, on the pair's communicator g_pair.
#pragma once

#include <mpi.h>
#include <starforest.h>

#include <vector>

#include "check.h"

namespace {

constexpr int kTag = 17;

// The two ranks being measured (all of MPI_COMM_WORLD on 2 ranks).
MPI_Comm g_pair = MPI_COMM_WORLD;

// One MPI round trip of size bytes: 0 -> 1 -> 0.
void mpi_roundtrip(int rank, char *buf, long size) {
  if (rank == 0) {
    MPI_Send(buf, (int)size, MPI_BYTE, 1, kTag, g_pair);
    MPI_Recv(buf, (int)size, MPI_BYTE, 1, kTag, g_pair, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(buf, (int)size, MPI_BYTE, 0, kTag, g_pair, MPI_STATUS_IGNORE);
    MPI_Send(buf, (int)size, MPI_BYTE, 0, kTag, g_pair);
  }
}

// The round trip through host copies: rank 0 copies its buffer to the host
// and sends it; rank 1 receives, copies it to its buffer, copies it back and
// sends it; rank 0 receives and copies it to its buffer.
void staged_roundtrip(int rank, char *buf, std::vector<char> &host, long size) {
  if (rank == 0) {
    CHECK_STF(stf_device_memcpy(host.data(), buf, size));
    MPI_Send(host.data(), (int)size, MPI_BYTE, 1, kTag, g_pair);
    MPI_Recv(host.data(), (int)size, MPI_BYTE, 1, kTag, g_pair, MPI_STATUS_IGNORE);
    CHECK_STF(stf_device_memcpy(buf, host.data(), size));
  } else {
    MPI_Recv(host.data(), (int)size, MPI_BYTE, 0, kTag, g_pair, MPI_STATUS_IGNORE);
    CHECK_STF(stf_device_memcpy(buf, host.data(), size));
    CHECK_STF(stf_device_memcpy(host.data(), buf, size));
    MPI_Send(host.data(), (int)size, MPI_BYTE, 0, kTag, g_pair);
  }
}

// The floor of a transfer inside one GPU: each rank in turn copies the
// message device to device (stf_device_memcpy: on cuda cudaMemcpy, which
// returns when done), then hands the turn over with an empty message.
void copy_roundtrip(int rank, char *spare, const char *buf, long size) {
  char token = 0;
  if (rank == 0) {
    CHECK_STF(stf_device_memcpy(spare, buf, size));
    MPI_Send(&token, 0, MPI_BYTE, 1, kTag, g_pair);
    MPI_Recv(&token, 0, MPI_BYTE, 1, kTag, g_pair, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&token, 0, MPI_BYTE, 0, kTag, g_pair, MPI_STATUS_IGNORE);
    CHECK_STF(stf_device_memcpy(spare, buf, size));
    MPI_Send(&token, 0, MPI_BYTE, 0, kTag, g_pair);
  }
}

// The same round trip on the requests the basic transport uses, a
// persistent receive and an MPI_Isend (send then receive on rank 0, receive
// then send on rank 1), to separate the cost of the request kinds from the
// cost of the library.
struct PersistentRoundtrip {
  MPI_Request recv = MPI_REQUEST_NULL;
  char *buf;
  long size;
  int rank;
  PersistentRoundtrip(int r, char *b, long n) : buf(b), size(n), rank(r) {
    MPI_Recv_init(buf, (int)size, MPI_BYTE, 1 - r, kTag, g_pair, &recv);
  }
  ~PersistentRoundtrip() { MPI_Request_free(&recv); }
  void send() {
    MPI_Request q;
    MPI_Isend(buf, (int)size, MPI_BYTE, 1 - rank, kTag, g_pair, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  void receive() {
    MPI_Start(&recv);
    MPI_Wait(&recv, MPI_STATUS_IGNORE);
  }
  void operator()() {
    if (rank == 0) send();
    receive();
    if (rank == 1) send();
  }
};

}  // namespace
