// The units (MPI datatypes) the tests move, described well enough for the
// oracle: where the significant elements are, which bytes must never change
// (gaps of non-contiguous types), which ops must work and which must fail,
// and how to generate values that keep every result exact.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stft {

enum class Kind { SInt, UInt, Float, Complex, Bool, Byte, Char };

// One element inside a unit. bytes = significant bytes (10 for x87 long
// double; its padding is not compared).
struct Field {
  std::size_t offset;
  Kind kind;
  std::size_t bytes;
};

struct UnitSpec {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool derived = false;  // created here, freed by free_units
  // What the oracle hands to MPI_Reduce_local for user-defined ops (MPI's
  // builtin ops reject derived types there): count elements of a builtin
  // type. Builtin ops are computed by the oracle itself (apply_op).
  MPI_Datatype oracle_type = MPI_DATATYPE_NULL;
  int oracle_count = 1;
  std::size_t extent = 0;
  std::vector<Field> fields;
  // Bytes inside a unit that belong to no element and must stay untouched.
  std::vector<std::pair<std::size_t, std::size_t>> gaps;
  std::vector<MPI_Op> ops;    // ops that must work (bcast, reduce)
  std::vector<MPI_Op> fetch;  // ops also run through fetch_and_op
  std::vector<std::pair<MPI_Op, int>> bad;  // ops that must fail, with the stf_error
  bool core = false;          // part of the small set run on every graph
};

// All units of the suite (derived types committed). Collective-free.
std::vector<UnitSpec> make_units();
// Every builtin integer and floating type except long double (what device
// data takes), each with REPLACE, SUM, PROD, MAX and MIN (and SUM through
// fetch-and-op).
std::vector<UnitSpec> make_arithmetic_units();
void free_units(std::vector<UnitSpec> &units);

const char *op_name(MPI_Op op);

// Fill the fields of one unit at dst with a value chosen for op from key.
// big: the value may have magnitude > 1 for PROD (the oracle allows only a
// few such factors per root so products never overflow).
void gen_unit(const UnitSpec &u, MPI_Op op, std::uint64_t key, bool big, void *dst);
// inout = inout op in (fields only; MPI_REPLACE copies in).
void apply_op(const UnitSpec &u, MPI_Op op, void *inout, const void *in);
// Copy the fields of src into dst (gaps and padding untouched).
void copy_unit(const UnitSpec &u, void *dst, const void *src);
// Fields and gaps equal (padding ignored).
bool unit_equal(const UnitSpec &u, const void *a, const void *b);
std::string format_unit(const UnitSpec &u, const void *p);

}  // namespace stft
