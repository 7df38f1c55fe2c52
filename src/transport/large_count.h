// Messages of any byte count. MPI's classic calls count in int, so a
// message above INT_MAX bytes needs the MPI-4 large-count calls (the _c
// forms, which MPICH 4 has) or, where the MPI has none (Open MPI 4.1), one
// derived datatype that covers the bytes: blocks of 1 MiB and the remainder.
// Both ends of a message describe it the same way (the same byte count
// through the same helper), so their type signatures match.
#pragma once

#include <cstddef>

#include "core/error.h"

namespace stf {

// A byte count as the (count, datatype) pair of an int-counted MPI call:
// (bytes, MPI_BYTE) up to INT_MAX, else (1, a derived type this object owns).
// The type is freed with the object, so keep it as long as a persistent
// request made with it (nonblocking calls may free it once posted).
class ByteCount {
 public:
  ByteCount() = default;
  ByteCount(const ByteCount &) = delete;
  ByteCount &operator=(const ByteCount &) = delete;
  ByteCount(ByteCount &&o) noexcept : count_(o.count_), type_(o.type_) { o.type_ = MPI_BYTE; }
  ByteCount &operator=(ByteCount &&o) noexcept {
    if (this != &o) {
      reset();
      count_ = o.count_;
      type_ = o.type_;
      o.type_ = MPI_BYTE;
    }
    return *this;
  }
  ~ByteCount() { reset(); }
  int set(std::size_t bytes);
  void reset();
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  int count_ = 0;
  MPI_Datatype type_ = MPI_BYTE;
};

// Persistent and nonblocking point-to-point calls and MPI_Put of `bytes`
// bytes. `keep` holds the derived type a persistent request needs, if any.
// Puts go in pieces of at most 1 GiB on every MPI (large_count.cpp).
int recv_init_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req,
                    ByteCount *keep);
int isend_bytes(const void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req);
int irecv_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req);
int put_bytes(const void *buf, std::size_t bytes, int rank, MPI_Aint disp, MPI_Win win);

// The size of a message received with `type`: MPI_BYTE, or for a
// recv_init_bytes the derived type of its ByteCount.
inline int received_bytes(const MPI_Status &status_in, MPI_Datatype type, long long *bytes) {
  MPI_Status status = status_in;  // SMPI's MPI_Get_elements_x takes a non-const status
  if (type != MPI_BYTE) {  // a derived type: count its bytes, not its whole types
    MPI_Count n = 0;
    STF_MPI(MPI_Get_elements_x(&status, type, &n));
    *bytes = n;
    return STF_SUCCESS;
  }
#if MPI_VERSION >= 4
  MPI_Count n = 0;
  STF_MPI(MPI_Get_count_c(&status, MPI_BYTE, &n));
#else
  int n = 0;  // at most INT_MAX: larger messages have a derived type here
  STF_MPI(MPI_Get_count(&status, MPI_BYTE, &n));
#endif
  *bytes = n;
  return STF_SUCCESS;
}

}  // namespace stf
