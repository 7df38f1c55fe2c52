// Messages of any byte count (large_count.h).
#include "transport/large_count.h"

#include <algorithm>
#include <climits>

namespace stf {
namespace {

constexpr std::size_t kBlock = std::size_t(1) << 20;  // bytes per block of the derived type

// A committed type of exactly `bytes` bytes: q blocks of 1 MiB, then r bytes.
int make_bytes_type(std::size_t bytes, MPI_Datatype *out) {
  const std::size_t q = bytes / kBlock, r = bytes % kBlock;
  if (q > INT_MAX) return set_error(STF_ERR_UNSUPPORTED, "message of %zu bytes: too many blocks", bytes);
  MPI_Datatype block, blocks;
  STF_MPI(MPI_Type_contiguous(static_cast<int>(kBlock), MPI_BYTE, &block));
  STF_MPI(MPI_Type_contiguous(static_cast<int>(q), block, &blocks));
  MPI_Type_free(&block);
  if (r == 0) {
    *out = blocks;
  } else {
    const int lengths[2] = {1, static_cast<int>(r)};
    const MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(q * kBlock)};
    const MPI_Datatype types[2] = {blocks, MPI_BYTE};
    const int rc = MPI_Type_create_struct(2, lengths, displs, types, out);
    MPI_Type_free(&blocks);
    STF_MPI(rc);
  }
  STF_MPI(MPI_Type_commit(out));
  return STF_SUCCESS;
}

}  // namespace

int ByteCount::set(std::size_t bytes) {
  reset();
  if (bytes <= INT_MAX) {
    count_ = static_cast<int>(bytes);
    return STF_SUCCESS;
  }
  STF_CHECK(make_bytes_type(bytes, &type_));
  count_ = 1;
  return STF_SUCCESS;
}

void ByteCount::reset() {
  if (type_ != MPI_BYTE) MPI_Type_free(&type_);
  type_ = MPI_BYTE;
  count_ = 0;
}

#if MPI_VERSION >= 4
int recv_init_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req, ByteCount *) {
  STF_MPI(MPI_Recv_init_c(buf, static_cast<MPI_Count>(bytes), MPI_BYTE, rank, tag, comm, req));
  return STF_SUCCESS;
}
int isend_bytes(const void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req) {
  STF_MPI(MPI_Isend_c(buf, static_cast<MPI_Count>(bytes), MPI_BYTE, rank, tag, comm, req));
  return STF_SUCCESS;
}
int irecv_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req) {
  STF_MPI(MPI_Irecv_c(buf, static_cast<MPI_Count>(bytes), MPI_BYTE, rank, tag, comm, req));
  return STF_SUCCESS;
}
#else
int recv_init_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req,
                    ByteCount *keep) {
  STF_CHECK(keep->set(bytes));
  STF_MPI(MPI_Recv_init(buf, keep->count(), keep->type(), rank, tag, comm, req));
  return STF_SUCCESS;
}
// A datatype may be freed once the nonblocking call using it is posted.
// Up to INT_MAX bytes no ByteCount: this is on every basic send's path.
int isend_bytes(const void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req) {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) {
    STF_MPI(MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, rank, tag, comm, req));
    return STF_SUCCESS;
  }
  ByteCount b;
  STF_CHECK(b.set(bytes));
  STF_MPI(MPI_Isend(buf, b.count(), b.type(), rank, tag, comm, req));
  return STF_SUCCESS;
}
int irecv_bytes(void *buf, std::size_t bytes, int rank, int tag, MPI_Comm comm, MPI_Request *req) {
  ByteCount b;
  STF_CHECK(b.set(bytes));
  STF_MPI(MPI_Irecv(buf, b.count(), b.type(), rank, tag, comm, req));
  return STF_SUCCESS;
}
#endif

// Puts of at most 1 GiB each, on every MPI: one MPI_Put_c of 2.1 GiB fails
// in MPICH 4.0.2 over UCX ("Other MPI error"), and a derived datatype is
// no better for one-sided transfers, which move it block by block.
int put_bytes(const void *buf, std::size_t bytes, int rank, MPI_Aint disp, MPI_Win win) {
  constexpr std::size_t kChunk = std::size_t(1) << 30;
  const char *p = static_cast<const char *>(buf);
  for (std::size_t done = 0; done < bytes; done += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes - done));
    STF_MPI(MPI_Put(p + done, n, MPI_BYTE, rank, disp + static_cast<MPI_Aint>(done), n, MPI_BYTE, win));
  }
  return STF_SUCCESS;
}

}  // namespace stf
