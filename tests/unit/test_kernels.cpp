// Kernel layer: the pack/unpack/scatter/fetch kernels, checked against a
// reference written here (builtin ops) and MPI_Reduce_local (user-defined
// ops). How a datatype decodes into a unit: test_unit_decode.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "decoded.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace stf {
namespace {

using Bytes = std::vector<unsigned char>;

const Kernels *kernels_for(const Unit &u, MPI_Op op) {
  const Kernels *k = nullptr;
  EXPECT_EQ(get_kernels(u, op, &k), STF_SUCCESS) << stf_last_error_message();
  return k;
}

// ---- builtin (type, op) combinations against the reference -----------------

struct OpCase {
  MPI_Op op;
  const char *name;
};
const OpCase kOps[] = {{MPI_SUM, "SUM"},   {MPI_PROD, "PROD"},     {MPI_MAX, "MAX"},       {MPI_MIN, "MIN"},
                       {MPI_LAND, "LAND"}, {MPI_LOR, "LOR"},       {MPI_LXOR, "LXOR"},     {MPI_BAND, "BAND"},
                       {MPI_BOR, "BOR"},   {MPI_BXOR, "BXOR"},     {MPI_MAXLOC, "MAXLOC"}, {MPI_MINLOC, "MINLOC"},
                       {MPI_REPLACE, "REPLACE"}, {MPI_NO_OP, "NO_OP"}};

// MPI-3.1 5.9.2, written out independently of the implementation's table.
bool mpi_defines(BaseKind kind, MPI_Op op) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return true;
  if (op == MPI_SUM || op == MPI_PROD) return kind == kInteger || kind == kFloat || kind == kComplex;
  if (op == MPI_MAX || op == MPI_MIN) return kind == kInteger || kind == kFloat;
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return kind == kInteger || kind == kBool;
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return kind == kInteger || kind == kByte;
  return kind == kPair;  // MAXLOC, MINLOC
}

// Small values so integer products never overflow (at most two factors meet
// in one target) and float sums and products are exact. Fields are set one by
// one so padding stays zero and results compare bytewise.
template <class T>
struct Gen {
  static void set(T *p, BaseKind kind, std::mt19937 &rng) {
    if constexpr (std::is_same<T, bool>::value) {
      *p = rng() % 2;
    } else if constexpr (std::is_floating_point<T>::value) {
      *p = static_cast<T>(static_cast<int>(rng() % 13) - 6);
    } else if (kind == kByte || kind == kText) {
      *p = static_cast<T>(rng() % 120);
    } else if (std::is_signed<T>::value) {
      *p = static_cast<T>(static_cast<int>(rng() % 7) - 3);  // includes 0 for the logical ops
    } else {
      *p = static_cast<T>(rng() % 6);
    }
  }
};
template <class F>
struct Gen<std::complex<F>> {
  static void set(std::complex<F> *p, BaseKind, std::mt19937 &rng) {
    F *f = reinterpret_cast<F *>(p);
    f[0] = static_cast<F>(static_cast<int>(rng() % 7) - 3);
    f[1] = static_cast<F>(static_cast<int>(rng() % 7) - 3);
  }
};
template <class V>
struct Gen<ValIdx<V>> {
  static void set(ValIdx<V> *p, BaseKind, std::mt19937 &rng) {
    p->v = static_cast<V>(rng() % 4);  // frequent ties exercise the index rule
    p->i = static_cast<int>(rng() % 10);
  }
};

template <class T>
Bytes random_units(std::size_t units, int count, BaseKind kind, std::mt19937 &rng) {
  Bytes b(units * count * sizeof(T), 0);
  T *p = reinterpret_cast<T *>(b.data());
  for (std::size_t e = 0; e < units * count; ++e) Gen<T>::set(p + e, kind, rng);
  return b;
}

template <class T>
struct IsValIdx : std::false_type {};
template <class V>
struct IsValIdx<ValIdx<V>> : std::true_type {};
template <class T>
struct IsComplex : std::false_type {};
template <class F>
struct IsComplex<std::complex<F>> : std::true_type {};

// target = target op contribution for one element of a builtin op (MPI-3.1
// 5.9.2, written out here: the reference must not share a bug with the MPI
// under test, and MPICH 4.0.2 computes MIN and MAX of unsigned types as
// signed). Every builtin op commutes, so this is also MPI's order.
template <class T>
void reference_op(MPI_Op op, T &t, const T &c) {
  if constexpr (IsValIdx<T>::value) {
    const bool take = op == MPI_MAXLOC ? c.v > t.v : c.v < t.v;
    if (take) t = c;
    else if (c.v == t.v && c.i < t.i) t.i = c.i;
  } else if constexpr (IsComplex<T>::value) {
    t = op == MPI_PROD ? t * c : t + c;
  } else if constexpr (std::is_same<T, bool>::value) {
    if (op == MPI_LAND) t = t && c;
    else if (op == MPI_LOR) t = t || c;
    else t = t != c;  // LXOR
  } else {
    if (op == MPI_SUM) t = static_cast<T>(t + c);
    else if (op == MPI_PROD) t = static_cast<T>(t * c);
    else if (op == MPI_MAX) t = t < c ? c : t;
    else if (op == MPI_MIN) t = c < t ? c : t;
    else if constexpr (std::is_integral<T>::value) {
      if (op == MPI_LAND) t = t && c;
      else if (op == MPI_LOR) t = t || c;
      else if (op == MPI_LXOR) t = !t != !c;
      else if (op == MPI_BAND) t = static_cast<T>(t & c);
      else if (op == MPI_BOR) t = static_cast<T>(t | c);
      else if (op == MPI_BXOR) t = static_cast<T>(t ^ c);
    }
  }
}

// Store t's value bytes at dst, leaving padding as it was (an x87 long
// double has 10 value bytes in 16; the kernels never write the other 6).
constexpr std::size_t kLongDoubleValue = LDBL_MANT_DIG == 64 ? 10 : sizeof(long double);
template <class T>
void store_value(unsigned char *dst, const T &t) {
  if constexpr (std::is_same<T, long double>::value) {
    std::memcpy(dst, &t, kLongDoubleValue);
  } else if constexpr (std::is_same<T, std::complex<long double>>::value) {
    const long double parts[2] = {t.real(), t.imag()};
    std::memcpy(dst, &parts[0], kLongDoubleValue);
    std::memcpy(dst + sizeof(long double), &parts[1], kLongDoubleValue);
  } else if constexpr (IsValIdx<T>::value) {
    store_value(dst + offsetof(T, v), t.v);
    std::memcpy(dst + offsetof(T, i), &t.i, sizeof t.i);
  } else {
    std::memcpy(dst, &t, sizeof t);
  }
}

bool is_builtin(MPI_Op op) {
  for (const OpCase &o : kOps)
    if (o.op == op) return true;
  return false;
}

// Reference: target = contribution op target, one unit at a time; builtin
// ops by reference_op, user-defined ones (the tests' own) by MPI_Reduce_local.
template <class T>
void oracle_apply(const Unit &u, MPI_Datatype elem, MPI_Op op, const unsigned char *in, unsigned char *inout) {
  if (op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) {
    std::memcpy(inout, in, u.extent);
    return;
  }
  if (!is_builtin(op)) {
    ASSERT_EQ(MPI_Reduce_local(in, inout, u.count, elem, op), MPI_SUCCESS);
    return;
  }
  for (int e = 0; e < u.count; ++e) {
    T t, c;
    std::memcpy(&t, inout + e * sizeof(T), sizeof(T));
    std::memcpy(&c, in + e * sizeof(T), sizeof(T));
    reference_op(op, t, c);
    store_value(inout + e * sizeof(T), t);
  }
}

template <class T>
void check_combination(const Unit &u, MPI_Datatype elem, BaseKind kind, MPI_Op op, std::mt19937 &rng) {
  const Kernels *k = kernels_for(u, op);
  ASSERT_NE(k, nullptr);
  const std::size_t ext = u.extent;
  // 12 contributions into 10 targets: two targets are hit twice (in
  // increasing i), the rest at most once.
  const std::vector<stf_int> idx = {3, 0, 7, 3, 9, 1, 5, 8, 2, 6, 4, 5};
  const IndexList il = IndexList::array(idx.data(), static_cast<stf_int>(idx.size()), true);
  const std::size_t n = idx.size();

  const Bytes data = random_units<T>(10, u.count, kind, rng);
  const Bytes buf = random_units<T>(n, u.count, kind, rng);

  // pack: plain gather of unit images.
  Bytes packed(n * ext);
  k->pack(u, il, data.data(), packed.data());
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(std::memcmp(&packed[i * ext], &data[idx[i] * ext], ext), 0) << "pack unit " << i;

  // unpack
  Bytes mine = data, ref = data;
  k->unpack(u, il, buf.data(), mine.data(), op);
  for (std::size_t i = 0; i < n; ++i) oracle_apply<T>(u, elem, op, &buf[i * ext], &ref[idx[i] * ext]);
  EXPECT_EQ(mine, ref) << "unpack";

  // scatter: source units picked with repeats from a separate array.
  const std::vector<stf_int> sidx = {0, 4, 4, 1, 11, 2, 7, 3, 3, 9, 10, 5};
  const IndexList sl = IndexList::array(sidx.data(), static_cast<stf_int>(sidx.size()), true);
  const Bytes src = random_units<T>(12, u.count, kind, rng);
  mine = data;
  ref = data;
  k->scatter(u, sl, src.data(), il, mine.data(), op);
  for (std::size_t i = 0; i < n; ++i) oracle_apply<T>(u, elem, op, &src[sidx[i] * ext], &ref[idx[i] * ext]);
  EXPECT_EQ(mine, ref) << "scatter";

  // fetch_and_op: buf receives the value before each contribution.
  mine = data;
  ref = data;
  Bytes mybuf = buf, refbuf = buf;
  k->fetch_and_op(u, il, mine.data(), mybuf.data(), op);
  std::vector<unsigned char> old(ext);
  for (std::size_t i = 0; i < n; ++i) {
    std::memcpy(old.data(), &ref[idx[i] * ext], ext);
    oracle_apply<T>(u, elem, op, &refbuf[i * ext], &ref[idx[i] * ext]);
    std::memcpy(&refbuf[i * ext], old.data(), ext);
  }
  EXPECT_EQ(mine, ref) << "fetch_and_op data";
  EXPECT_EQ(mybuf, refbuf) << "fetch_and_op fetched";
}

template <class T>
void check_type(MPI_Datatype type, const char *name, BaseKind kind) {
  std::mt19937 rng(12345);
  MPI_Datatype contig;
  MPI_Type_contiguous(3, type, &contig);
  contig = committed(contig);
  for (MPI_Datatype t : {type, contig}) {
    const Unit *u = decode(t);
    ASSERT_NE(u, nullptr);
    ASSERT_FALSE(u->opaque()) << name;
    for (const OpCase &o : kOps) {
      SCOPED_TRACE(std::string(name) + " x" + std::to_string(u->count) + " " + o.name);
      if (mpi_defines(kind, o.op)) {
        check_combination<T>(*u, type, kind, o.op, rng);
      } else {
        const Kernels *k = nullptr;
        EXPECT_EQ(get_kernels(*u, o.op, &k), STF_ERR_OP);
        EXPECT_NE(std::string(stf_last_error_message()).find(name), std::string::npos)
            << stf_last_error_message();
      }
    }
  }
  MPI_Type_free(&contig);
}

TEST(Kernels, EveryBuiltinTypeAndOpMatchesMPI) {
#define CHECK_TYPE(name, ctype, handle, kind) check_type<ctype>(handle, #handle, kind);
  STF_BASE_TYPES(CHECK_TYPE)
#undef CHECK_TYPE
}

TEST(Kernels, UndefinedCombinations) {
  struct Case {
    MPI_Datatype type;
    MPI_Op op;
    const char *message;
  } cases[] = {{MPI_DOUBLE, MPI_BAND, "MPI_BAND is not defined for MPI_DOUBLE"},
               {MPI_CHAR, MPI_SUM, "MPI_SUM is not defined for MPI_CHAR"},
               {MPI_INT, MPI_MAXLOC, "MPI_MAXLOC is not defined for MPI_INT"},
               {MPI_C_DOUBLE_COMPLEX, MPI_LAND, "MPI_LAND"},
               {MPI_C_FLOAT_COMPLEX, MPI_MAX, "MPI_MAX"},
               {MPI_BYTE, MPI_SUM, "MPI_BYTE"},
               {MPI_C_BOOL, MPI_BOR, "MPI_C_BOOL"},
               {MPI_2INT, MPI_SUM, "MPI_2INT"},
               {MPI_WCHAR, MPI_MAX, "MPI_WCHAR"}};
  for (const Case &c : cases) {
    const Kernels *k = nullptr;
    EXPECT_EQ(get_kernels(*decode(c.type), c.op, &k), STF_ERR_OP);
    EXPECT_NE(std::string(stf_last_error_message()).find(c.message), std::string::npos)
        << stf_last_error_message();
  }
  const Kernels *k = nullptr;
  EXPECT_EQ(get_kernels(*decode(MPI_INT), MPI_OP_NULL, &k), STF_ERR_OP);
  EXPECT_STREQ(op_name(MPI_BXOR), "MPI_BXOR");
  EXPECT_STREQ(op_name(MPI_REPLACE), "MPI_REPLACE");
}

// ---- fetch order, contiguous index lists ------------------------------------

TEST(Kernels, FetchAndOpDuplicatesInOrder) {
  const Unit &u = *decode(MPI_INT);
  const Kernels *k = kernels_for(u, MPI_SUM);
  int data[3] = {100, 10, 1000};
  int buf[4] = {1, 2, 3, 4};
  const stf_int idx[4] = {1, 1, 0, 1};
  k->fetch_and_op(u, IndexList::array(idx, 4, true), data, buf, MPI_SUM);
  EXPECT_EQ(data[0], 103);
  EXPECT_EQ(data[1], 17);
  EXPECT_EQ(data[2], 1000);
  EXPECT_EQ(buf[0], 10);
  EXPECT_EQ(buf[1], 11);
  EXPECT_EQ(buf[2], 100);
  EXPECT_EQ(buf[3], 13);

  // MPI_NO_OP only fetches.
  int nb[2] = {-1, -1};
  kernels_for(u, MPI_NO_OP)->fetch_and_op(u, IndexList::array(idx + 2, 2, false), data, nb, MPI_NO_OP);
  EXPECT_EQ(nb[0], 103);
  EXPECT_EQ(nb[1], 17);
  EXPECT_EQ(data[1], 17);
}

TEST(Kernels, ContiguousIndexList) {
  MPI_Datatype t3;
  MPI_Type_contiguous(3, MPI_DOUBLE, &t3);
  t3 = committed(t3);
  for (MPI_Datatype t : {MPI_DOUBLE, t3}) {
    const Unit &u = *decode(t);
    const int c = u.count;
    for (MPI_Op op : {MPI_REPLACE, MPI_SUM}) {
      const Kernels *k = kernels_for(u, op);
      std::vector<double> data(8 * c), buf(3 * c);
      for (std::size_t e = 0; e < data.size(); ++e) data[e] = static_cast<double>(e);
      for (std::size_t e = 0; e < buf.size(); ++e) buf[e] = 100.0 + static_cast<double>(e);
      const IndexList range = IndexList::range(2, 3);  // units 2, 3, 4

      std::vector<double> packed(3 * c);
      k->pack(u, range, data.data(), packed.data());
      for (int e = 0; e < 3 * c; ++e) EXPECT_EQ(packed[e], data[2 * c + e]);

      std::vector<double> d = data;
      k->unpack(u, range, buf.data(), d.data(), op);
      for (std::size_t e = 0; e < d.size(); ++e) {
        const bool hit = e >= 2u * c && e < 5u * c;
        const double expect = !hit ? data[e] : op == MPI_SUM ? data[e] + buf[e - 2 * c] : buf[e - 2 * c];
        EXPECT_EQ(d[e], expect) << e;
      }

      d = data;
      k->scatter(u, IndexList::range(0, 3), buf.data(), range, d.data(), op);
      for (int e = 0; e < 3 * c; ++e)
        EXPECT_EQ(d[2 * c + e], op == MPI_SUM ? data[2 * c + e] + buf[e] : buf[e]);

      d = data;
      std::vector<double> b = buf;
      k->fetch_and_op(u, range, d.data(), b.data(), op);
      for (int e = 0; e < 3 * c; ++e) {
        EXPECT_EQ(b[e], data[2 * c + e]);
        EXPECT_EQ(d[2 * c + e], op == MPI_SUM ? data[2 * c + e] + buf[e] : buf[e]);
      }
    }
  }
  MPI_Type_free(&t3);

  // Overlapping contiguous scatter keeps the loop's increasing-i semantics.
  const Unit &u = *decode(MPI_INT);
  int a[5] = {1, 2, 3, 4, 5};
  kernels_for(u, MPI_REPLACE)->scatter(u, IndexList::range(0, 3), a, IndexList::range(1, 3), a, MPI_REPLACE);
  EXPECT_EQ(a[1], 1);
  EXPECT_EQ(a[2], 1);
  EXPECT_EQ(a[3], 1);
  EXPECT_EQ(a[4], 5);
}

// A local scatter packs its source units into a buffer, a chunk at a time,
// and unpacks each chunk; one array on both sides, and units too large for
// the buffer, go one unit at a time; a few units go one by one. Each against
// the loop over i: enough units for several chunks, and 10, strided and
// indexed lists on either side (repeated destinations among them), units of
// 1, 3 and 200 doubles.
void scatter_against_the_loop(stf_int n) {
  std::mt19937 rng(7);
  const stf_int all = 2400;
  std::vector<stf_int> picked(all), perm(all + 100);
  for (stf_int &x : picked) x = static_cast<stf_int>(rng() % (all + 100));  // repeats among them
  for (stf_int i = 0; i < all + 100; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  // Rows of 2 (too short to go row by row) in a box of 5 x 41 x 30: 2 x 40 x
  // 30 units, or 2 x 5 x 1.
  const IndexList box = n == all ? IndexList::box(3, 2, 40, 30, 5, 41) : IndexList::box(3, 2, n / 2, 1, 5, 41);
  ASSERT_EQ(box.n, n);
  const IndexList lists[] = {IndexList::array(picked.data(), n, true), box, IndexList::array(perm.data(), n, false),
                             IndexList::range(50, n)};
  const char *names[] = {"indexed with repeats", "strided", "indexed", "contiguous"};
  for (int count : {1, 3, 200}) {
    MPI_Datatype t = MPI_DOUBLE;
    if (count > 1) {
      MPI_Type_contiguous(count, MPI_DOUBLE, &t);
      t = committed(t);
    }
    const Unit &u = *decode(t);
    // The loop: to's unit d.at(i) = from's unit s.at(i), or their sum, for increasing i.
    const auto loop = [&](MPI_Op op, const IndexList &s, const double *from, const IndexList &d, double *to) {
      for (stf_int i = 0; i < n; ++i)
        for (int e = 0; e < count; ++e) {
          const double in = from[static_cast<std::size_t>(s.at(i)) * count + e];
          double &out = to[static_cast<std::size_t>(d.at(i)) * count + e];
          out = op == MPI_SUM ? out + in : in;
        }
    };
    const std::size_t units = 5 * 41 * 31;  // covers every list above
    std::vector<double> src(units * count), dst(units * count);
    for (double &x : src) x = static_cast<double>(rng() % 1000);
    for (double &x : dst) x = static_cast<double>(rng() % 1000);
    for (MPI_Op op : {MPI_REPLACE, MPI_SUM}) {
      const Kernels *k = kernels_for(u, op);
      for (int si = 0; si < 3; ++si)  // a contiguous source is the unpack kernel's
        for (int di = 0; di < 4; ++di) {
          SCOPED_TRACE(std::to_string(n) + " units of " + std::to_string(count) + ", " + names[si] + " to " +
                       names[di] + (op == MPI_SUM ? ", SUM" : ", REPLACE"));
          std::vector<double> mine = dst, ref = dst;
          k->scatter(u, lists[si], src.data(), lists[di], mine.data(), op);
          loop(op, lists[si], src.data(), lists[di], ref.data());
          EXPECT_EQ(mine, ref);
        }
      // One array: unit 2i goes to unit 2i+2 through indexed lists, so each
      // unit the loop writes is the next one it reads.
      SCOPED_TRACE("one array, " + std::to_string(n) + " units of " + std::to_string(count));
      std::vector<stf_int> from(n), to(n);
      for (stf_int i = 0; i < n; ++i) from[i] = 2 * i, to[i] = 2 * i + 2;
      const IndexList s = IndexList::array(from.data(), n, false), d = IndexList::array(to.data(), n, false);
      std::vector<double> mine = dst, ref = dst;
      k->scatter(u, s, mine.data(), d, mine.data(), op);
      loop(op, s, ref.data(), d, ref.data());
      EXPECT_EQ(mine, ref);
    }
    if (count > 1) MPI_Type_free(&t);
  }
}
TEST(Kernels, ScatterAgainstTheLoop) { scatter_against_the_loop(2400); }
TEST(Kernels, FewUnitsScatterAgainstTheLoop) { scatter_against_the_loop(10); }

// ---- opaque units ---------------------------------------------------------------

TEST(Kernels, OpaqueVectorReplace) {
  MPI_Datatype vec;  // ints at byte 0, 8, 16 of a 20-byte unit
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  vec = committed(vec);
  const Unit &u = *decode(vec);
  ASSERT_TRUE(u.opaque());
  const Kernels *k = kernels_for(u, MPI_REPLACE);
  const int per = static_cast<int>(u.extent / sizeof(int));  // 5 ints per unit, 3 of them data

  std::vector<int> src(4 * per), dst(4 * per, -7);
  for (std::size_t e = 0; e < src.size(); ++e) src[e] = static_cast<int>(e);
  const stf_int sidx[2] = {3, 1}, didx[2] = {0, 2};
  std::vector<unsigned char> buf(2 * u.packed_bytes);
  k->pack(u, IndexList::array(sidx, 2, false), src.data(), buf.data());
  k->unpack(u, IndexList::array(didx, 2, false), buf.data(), dst.data(), MPI_REPLACE);
  auto check = [&](const std::vector<int> &d, const char *what) {
    for (int unit = 0; unit < 4; ++unit)
      for (int e = 0; e < per; ++e) {
        const int from = unit == 0 ? 3 : unit == 2 ? 1 : -1;
        const bool data_slot = e % 2 == 0;  // ints 1 and 3 of a unit are gaps
        const int expect = (from >= 0 && data_slot) ? src[from * per + e] : -7;
        EXPECT_EQ(d[unit * per + e], expect) << what << " unit " << unit << " int " << e;
      }
  };
  check(dst, "pack/unpack");

  std::vector<int> dst2(4 * per, -7);
  k->scatter(u, IndexList::array(sidx, 2, false), src.data(), IndexList::array(didx, 2, false), dst2.data(), MPI_REPLACE);
  check(dst2, "scatter");

  // fetch_and_op: the packed old values come back in buf.
  std::vector<int> dst3 = src;
  std::vector<unsigned char> fb = buf;  // holds src units 3 and 1
  k->fetch_and_op(u, IndexList::array(didx, 2, false), dst3.data(), fb.data(), MPI_REPLACE);
  std::vector<int> fetched(4 * per, -7);
  k->unpack(u, IndexList::array(didx, 2, false), fb.data(), fetched.data(), MPI_REPLACE);
  for (int e = 0; e < 5; e += 2) {
    EXPECT_EQ(dst3[0 * per + e], src[3 * per + e]);
    EXPECT_EQ(dst3[2 * per + e], src[1 * per + e]);
    EXPECT_EQ(fetched[0 * per + e], src[0 * per + e]);
    EXPECT_EQ(fetched[2 * per + e], src[2 * per + e]);
  }
  EXPECT_EQ(dst3[1], src[1]);  // gap untouched

  // Contiguous index list on opaque units.
  std::vector<int> dst4(4 * per, -7);
  k->pack(u, IndexList::range(2, 2), src.data(), buf.data());
  k->unpack(u, IndexList::range(1, 2), buf.data(), dst4.data(), MPI_REPLACE);
  EXPECT_EQ(dst4[1 * per + 0], src[2 * per + 0]);
  EXPECT_EQ(dst4[2 * per + 4], src[3 * per + 4]);
  EXPECT_EQ(dst4[1 * per + 1], -7);

  // Only REPLACE (and NO_OP) on opaque units.
  const Kernels *bad = nullptr;
  EXPECT_EQ(get_kernels(u, MPI_SUM, &bad), STF_ERR_TYPE);
  MPI_Op user;
  MPI_Op_create([](void *, void *, int *, MPI_Datatype *) {}, 1, &user);
  EXPECT_EQ(get_kernels(u, user, &bad), STF_ERR_TYPE);
  MPI_Op_free(&user);
  const Kernels *noop = kernels_for(u, MPI_NO_OP);
  std::vector<int> dst5 = src;
  noop->unpack(u, IndexList::array(didx, 2, false), buf.data(), dst5.data(), MPI_NO_OP);
  EXPECT_EQ(dst5, src);
  MPI_Type_free(&vec);
}

// ---- user-defined ops -----------------------------------------------------------

// User functions see the unit's datatype: *len units of it, all doubles here.
int doubles(int *len, MPI_Datatype *type) {
  int size = 0;
  MPI_Type_size(*type, &size);
  return *len * size / static_cast<int>(sizeof(double));
}

void absmax(void *in, void *inout, int *len, MPI_Datatype *type) {
  const double *a = static_cast<const double *>(in);
  double *b = static_cast<double *>(inout);
  for (int e = 0; e < doubles(len, type); ++e) b[e] = std::fmax(std::fabs(a[e]), std::fabs(b[e]));
}
// Not commutative: shows which operand is the contribution.
void twice_plus(void *in, void *inout, int *len, MPI_Datatype *type) {
  const double *a = static_cast<const double *>(in);
  double *b = static_cast<double *>(inout);
  for (int e = 0; e < doubles(len, type); ++e) b[e] = 2 * b[e] + a[e];
}

TEST(Kernels, UserDefinedOp) {
  MPI_Op amax, tp;
  MPI_Op_create(absmax, 1, &amax);
  MPI_Op_create(twice_plus, 0, &tp);
  EXPECT_STREQ(op_name(amax), "user-defined MPI_Op");
  MPI_Datatype t2;
  MPI_Type_contiguous(2, MPI_DOUBLE, &t2);
  t2 = committed(t2);
  std::mt19937 rng(7);
  for (MPI_Datatype t : {MPI_DOUBLE, t2}) {
    const Unit &u = *decode(t);
    for (MPI_Op op : {amax, tp}) {
      check_combination<double>(u, MPI_DOUBLE, kFloat, op, rng);
    }
  }
  // Operand order: target = contribution op target = 2 * target + contribution.
  const Unit &u = *decode(MPI_DOUBLE);
  double data[2] = {1, 10}, buf[3] = {5, 7, 100};
  const stf_int idx[3] = {0, 0, 1};
  kernels_for(u, tp)->fetch_and_op(u, IndexList::array(idx, 3, false), data, buf, tp);
  EXPECT_EQ(data[0], 2 * (2 * 1 + 5) + 7);
  EXPECT_EQ(data[1], 2 * 10 + 100);
  EXPECT_EQ(buf[0], 1);
  EXPECT_EQ(buf[1], 7);
  EXPECT_EQ(buf[2], 10);
  MPI_Type_free(&t2);
  MPI_Op_free(&amax);
  MPI_Op_free(&tp);
}

}  // namespace
}  // namespace stf
