// Arrays handed to operations: where their data is, its MPI type, and how
// many entries (units) they hold. No copies: what cannot be passed as it is
// (non-contiguous, byte-swapped, misaligned, read-only output) is refused.
#pragma once

#include <nanobind/ndarray.h>

#include <cstdint>

#include "common.h"

namespace stfpy {

struct Buffer {
  void *data = nullptr;
  MPI_Datatype base = MPI_DATATYPE_NULL;  // MPI type of one element
  int64_t units = 0;                      // entries: the length of the first axis
  int64_t block = 1;                      // elements per entry: product of the other axes
  nb::ndarray<nb::ro> held;               // an imported DLPack tensor, kept alive while in use
};

// The data of obj: a numpy array (fast path), an object with
// __cuda_array_interface__ (device memory of the active device), or one
// with __dlpack__ or the buffer protocol (device memory when its DLPack
// device is a GPU). what names the argument in messages; writable: an output.
Buffer get_buffer(nb::handle obj, const char *what, bool writable);

// The MPI type of one entry: base, or a contiguous block of base (committed
// once per (base, block) and kept until MPI_Finalize).
MPI_Datatype unit_of(const Buffer &b);

// The unit shared by two buffers; ValueError when dtypes or entry shapes differ.
MPI_Datatype common_unit(const Buffer &a, const char *aname, const Buffer &b, const char *bname);

// ValueError unless b holds at least need entries.
void check_length(const Buffer &b, const char *what, int64_t need, const char *meaning);

// The MPI type of numpy dtype kind ('b', 'i', 'u', 'f', 'c') and item size,
// MPI_DATATYPE_NULL when MPI has none (float16, ...).
MPI_Datatype mpi_type_of(char kind, int64_t itemsize);

}  // namespace stfpy
