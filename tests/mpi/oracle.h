// The serial oracle. Every rank knows the whole graph (GlobalGraph) and can
// regenerate any rank's initial data from (key, rank, index), so it computes
// the expected result of each operation for its own buffers without further
// communication; the test then compares the library's output byte for byte.
//
// Exactness: values come from gen_unit (small integers, halves, powers of
// two). For MPI_PROD only the first 3 leaves of each root (in (rank, slot)
// order) may hold a factor of magnitude > 1, so no product overflows even on
// the all-to-one graph; sums of small integers stay exact in every type
// (1- and 2-byte integers may wrap, which is defined for the conversions
// involved and identical in the library and in MPI_Reduce_local).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "graphs.h"
#include "units.h"

namespace stft {

// n units with kGuard extra units before and after, all filled with a
// sentinel pattern that depends on (tag, byte position), so stray writes,
// shifted writes and copies of the wrong buffer are all visible.
class Buffer {
 public:
  static constexpr int kGuard = 2;
  Buffer(const UnitSpec &u, stf_int n, std::uint64_t tag);
  void *data() { return bytes_.data() + kGuard * extent_; }  // unit 0
  const void *data() const { return bytes_.data() + kGuard * extent_; }
  unsigned char *unit(stf_int i) { return bytes_.data() + (kGuard + i) * extent_; }
  const unsigned char *unit(stf_int i) const { return bytes_.data() + (kGuard + i) * extent_; }
  stf_int size() const { return n_; }
  // from's bytes, guards included, over these (the same unit and size):
  // new values in the same memory.
  void overwrite(const Buffer &from);

 private:
  std::size_t extent_;
  stf_int n_;
  std::vector<unsigned char> bytes_;
};

// Initial data of one test case: every buffer of every rank is a function
// of (key, rank, index), generated for the op so results are exact.
struct DataGen {
  const GlobalGraph *g;
  const UnitSpec *u;
  MPI_Op op;
  std::uint64_t key;

  void root(int p, stf_int r, void *dst) const;
  void leaf(int p, stf_int i, void *dst) const;   // i: leaf index in rank p's iremote
  void multi(int p, stf_int m, void *dst) const;  // multi-root m of rank p

  stf_int leaf_slots(int p) const;  // leaf buffer length: maxleaf + 1
  Buffer root_buffer(int p) const;  // roots with values
  Buffer leaf_buffer(int p) const;  // leaf slots with values, holes sentinel
  Buffer multi_buffer(int p) const; // multi-roots with values
  Buffer blank_leaf_buffer(int p, std::uint64_t tag) const;  // sentinel only
  Buffer blank_multi_buffer(int p, std::uint64_t tag) const;
  Buffer blank_root_buffer(int p, std::uint64_t tag) const;
};

// Expected contents of rank me's buffers after each operation.
Buffer expect_bcast(const DataGen &d, int me);   // leaf buffer
Buffer expect_reduce(const DataGen &d, int me);  // root buffer
// reduce with MPI_REPLACE leaves the value of *some* leaf in a root of
// degree > 1 (the order among one root's leaves is unspecified): where got
// holds one of them, take it into want.
void accept_any_leaf(const DataGen &d, int me, const Buffer &got, Buffer *want);
// Expected root buffer and leafupdate buffer (leafupdate starts blank with tag).
void expect_fetch(const DataGen &d, int me, std::uint64_t update_tag, Buffer *root,
                  Buffer *update);
Buffer expect_gather(const DataGen &d, int me, std::uint64_t blank_tag);  // multi buffer
Buffer expect_scatter(const DataGen &d, int me);  // leaf buffer

// Which units of a buffer the operation may write (others must keep their
// bytes, as must the guards).
std::vector<char> leaf_mask(const GlobalGraph &g, int me);
std::vector<char> all_mask(stf_int n);
std::vector<char> root_mask(const GlobalGraph &g, int me);  // roots with degree > 0

// Compare got against want: masked units by fields and gaps, every other
// unit and the guards byte for byte. Reports up to 3 mismatches.
void compare_buffers(Checker &ck, const UnitSpec &u, const char *what, const Buffer &got,
                     const Buffer &want, const std::vector<char> &mask);

}  // namespace stft
