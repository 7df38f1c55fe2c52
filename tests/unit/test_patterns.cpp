// Every index pattern and block size gives the same bytes as the same kernel
// on the explicit index array (itself checked against MPI in test_kernels),
// and the atomic functors are race-free under threads.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/functors.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace stf {
namespace {

// Patterns over a space of 400 units, each with its explicit array.
struct Case {
  std::string name;
  IndexList list;
  std::vector<stf_int> units;
};

std::vector<stf_int> units_of(const IndexList &l) {
  std::vector<stf_int> v(l.n);
  for (stf_int i = 0; i < l.n; ++i) v[i] = l.at(i);
  return v;
}

std::vector<Case> cases(const std::vector<stf_int> &perm, const std::vector<stf_int> &dups) {
  std::vector<Case> c;
  auto add = [&](const char *name, IndexList l) { c.push_back({name, l, units_of(l)}); };
  add("contiguous", IndexList::range(17, 60));
  add("row", IndexList::box(3, 7, 6, 1, 11, 6));
  add("column", IndexList::box(5, 1, 30, 1, 9, 30));
  add("box", IndexList::box(2, 4, 3, 5, 6, 4));
  add("other box, same rows", IndexList::box(1, 4, 5, 3, 7, 6));  // scatters box <-> this row by row
  add("permutation", IndexList::array(perm.data(), static_cast<stf_int>(perm.size()), false));
  add("duplicates", IndexList::array(dups.data(), static_cast<stf_int>(dups.size()), true));
  return c;
}

MPI_Datatype block_of(MPI_Datatype elem, int k) {
  if (k == 1) return elem;
  MPI_Datatype t;
  MPI_Type_contiguous(k, elem, &t);
  MPI_Type_commit(&t);
  return t;
}

template <class T>
std::vector<T> values(std::size_t n, std::mt19937 &rng) {
  std::vector<T> v(n);
  for (T &x : v) x = static_cast<T>(static_cast<int>(rng() % 50) - 20);
  return v;
}

// Each kernel on every pattern (and scatter on every pair) against the array form.
template <class T>
void check_patterns(MPI_Datatype elem, MPI_Op op) {
  std::mt19937 rng(99);
  std::vector<stf_int> perm(70), dups(70);
  for (stf_int i = 0; i < 70; ++i) perm[i] = i * 5 % 350 + 7;
  std::shuffle(perm.begin(), perm.end(), rng);
  for (stf_int &x : dups) x = static_cast<stf_int>(rng() % 40);
  const std::vector<Case> all = cases(perm, dups);
  for (int k : {1, 2, 3, 4, 5, 8, 9}) {
    MPI_Datatype type = block_of(elem, k);
    const Unit *u = nullptr;
    ASSERT_EQ(decode_unit(type, &u), STF_SUCCESS);
    const Kernels *kern = nullptr;
    ASSERT_EQ(get_kernels(*u, op, &kern), STF_SUCCESS);
    const std::size_t per = static_cast<std::size_t>(k), space = 400 * per;
    const std::vector<T> data = values<T>(space, rng), buf0 = values<T>(space, rng);
    for (const Case &c : all) {
      SCOPED_TRACE(c.name + " block " + std::to_string(k));
      const IndexList arr = IndexList::array(c.units.data(), c.list.n, c.list.has_duplicates);
      std::vector<T> got(c.list.n * per), want(c.list.n * per);
      kern->pack(*u, c.list, data.data(), got.data());
      kern->pack(*u, arr, data.data(), want.data());
      EXPECT_EQ(got, want) << "pack";

      std::vector<T> d1 = data, d2 = data;
      kern->unpack(*u, c.list, buf0.data(), d1.data(), op);
      kern->unpack(*u, arr, buf0.data(), d2.data(), op);
      EXPECT_EQ(d1, d2) << "unpack";

      std::vector<T> b1 = buf0, b2 = buf0;
      d1 = data, d2 = data;
      kern->fetch_and_op(*u, c.list, d1.data(), b1.data(), op);
      kern->fetch_and_op(*u, arr, d2.data(), b2.data(), op);
      EXPECT_EQ(d1, d2) << "fetch_and_op data";
      EXPECT_EQ(b1, b2) << "fetch_and_op fetched";

      for (const Case &src : all) {
        if (src.list.n < c.list.n) continue;  // scatter the first c.list.n units of src
        IndexList s = src.list, sarr = IndexList::array(src.units.data(), c.list.n, src.list.has_duplicates);
        if (s.n != c.list.n) s = sarr;  // a prefix of a pattern is not that pattern
        d1 = data, d2 = data;
        kern->scatter(*u, s, buf0.data(), c.list, d1.data(), op);
        kern->scatter(*u, sarr, buf0.data(), arr, d2.data(), op);
        EXPECT_EQ(d1, d2) << "scatter from " << src.name;
      }
    }
    if (k > 1) MPI_Type_free(&type);
  }
}

TEST(Patterns, DoubleReplace) { check_patterns<double>(MPI_DOUBLE, MPI_REPLACE); }
TEST(Patterns, DoubleSum) { check_patterns<double>(MPI_DOUBLE, MPI_SUM); }
TEST(Patterns, IntMax) { check_patterns<int>(MPI_INT, MPI_MAX); }
TEST(Patterns, ShortReplace) { check_patterns<short>(MPI_SHORT, MPI_REPLACE); }  // 2-byte words
TEST(Patterns, CharReplace) { check_patterns<char>(MPI_CHAR, MPI_REPLACE); }     // 1-byte words

// The same functor body runs by index in any order (what a CUDA thread or a
// pool worker does): operator()(i) matches the serial kernels.
TEST(Patterns, FunctorByIndexMatchesWalk) {
  const IndexList box = IndexList::box(4, 3, 4, 2, 5, 6);
  std::vector<double> data(200), buf(box.n * 2), want(box.n * 2);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<double>(i);
  const PackFn<double, 2, Strided> f{Strided(box), data.data(), buf.data(), Block<2>(2)};
  for (stf_int i = box.n - 1; i >= 0; --i) f(i);
  MPI_Datatype two = block_of(MPI_DOUBLE, 2);
  const Unit *u = nullptr;
  ASSERT_EQ(decode_unit(two, &u), STF_SUCCESS);
  const Kernels *k = nullptr;
  ASSERT_EQ(get_kernels(*u, MPI_REPLACE, &k), STF_SUCCESS);
  k->pack(*u, box, data.data(), want.data());
  EXPECT_EQ(buf, want);
  MPI_Type_free(&two);
}

// ---- atomics ------------------------------------------------------------------

// Threads unpack interleaved slices of one buffer whose destinations collide
// on a few units: with the atomic functor no contribution may be lost.
template <class T>
void hammer(T init, T contribution, int nthreads, int per_thread, int targets) {
  const stf_int n = nthreads * per_thread;
  ASSERT_EQ(n % targets, 0);
  std::vector<stf_int> idx(n);
  for (stf_int i = 0; i < n; ++i) idx[i] = i % targets;
  const IndexList l = IndexList::array(idx.data(), n, true);
  ASSERT_TRUE(needs_atomics(l, true));
  ASSERT_FALSE(needs_atomics(l, false));
  std::vector<T> data(targets, init), buf(n, contribution);
  const UnpackFn<T, OpSum<T>, 1, Indexed, true> f{Indexed(l), buf.data(), data.data(), Block<1>(1)};
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; ++t)
    pool.emplace_back([&, t] {
      for (stf_int i = t; i < n; i += nthreads) f(i);
    });
  for (std::thread &th : pool) th.join();
  const T want = static_cast<T>(init + contribution * static_cast<T>(n / targets));
  for (int r = 0; r < targets; ++r) EXPECT_EQ(data[r], want) << "target " << r;
}

TEST(Atomics, UnpackSumLosesNothing) {
  hammer<double>(1.0, 0.5, 4, 20000, 5);  // halves: exact
  hammer<long long>(0, 3, 4, 30000, 8);
}

TEST(Atomics, UnpackMaxAndScatterSum) {
  // MAX: every thread offers distinct values; the largest must win.
  const int nthreads = 4, per = 10000, n = nthreads * per;
  std::vector<stf_int> idx(n);
  std::vector<int> buf(n);
  for (int i = 0; i < n; ++i) idx[i] = i % 2, buf[i] = i;
  const IndexList l = IndexList::array(idx.data(), n, true);
  std::vector<int> data(2, -1);
  const UnpackFn<int, OpMax<int>, 1, Indexed, true> fmax{Indexed(l), buf.data(), data.data(), Block<1>(1)};
  // Scatter with SUM into one unit of 2-element blocks from a strided source.
  std::vector<float> src(2 * n, 1.0f), dst(2, 0.0f);
  std::vector<stf_int> zero(n / 2, 0);
  const IndexList sl = IndexList::box(0, 1, n / 2, 1, 2, n / 2), dl = IndexList::array(zero.data(), n / 2, true);
  const ScatterFn<float, OpSum<float>, 2, Strided, Indexed, true> fsum{Strided(sl), Indexed(dl), src.data(),
                                                                       dst.data(), Block<2>(2)};
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; ++t)
    pool.emplace_back([&, t] {
      for (int i = t; i < n; i += nthreads) fmax(i);
      for (int i = t; i < n / 2; i += nthreads) fsum(i);
    });
  for (std::thread &th : pool) th.join();
  EXPECT_EQ(data[0], n - 2);
  EXPECT_EQ(data[1], n - 1);
  EXPECT_EQ(dst[0], static_cast<float>(n / 2));  // small integers: exact in float
  EXPECT_EQ(dst[1], static_cast<float>(n / 2));
}

}  // namespace
}  // namespace stf
