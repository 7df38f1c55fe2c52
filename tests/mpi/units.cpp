#include "units.h"

#include <cfloat>
#include <complex>
#include <cstdio>
#include <cstring>

#include "graphs.h"  // Rng, hash_key
#include "starforest.h"

namespace stft {

namespace {

// Significant bytes of a long double: the x87 80-bit format sits in 16
// bytes, 6 of which are padding with unspecified contents.
constexpr std::size_t kLongDoubleBytes = LDBL_MANT_DIG == 64 ? 10 : sizeof(long double);

UnitSpec builtin(const char *name, MPI_Datatype t, Kind k, std::size_t bytes,
                 std::vector<MPI_Op> ops, std::vector<MPI_Op> fetch,
                 std::vector<std::pair<MPI_Op, int>> bad = {}) {
  UnitSpec u;
  u.name = name;
  u.type = t;
  u.oracle_type = t;
  MPI_Aint lb, extent;
  MPI_Type_get_extent(t, &lb, &extent);
  u.extent = static_cast<std::size_t>(extent);
  u.fields = {{0, k, bytes}};
  u.ops = std::move(ops);
  u.fetch = std::move(fetch);
  u.bad = std::move(bad);
  return u;
}

enum class OpClass { Replace, Sum, Prod, MinMax, Logical, Bitwise, Loc };

OpClass op_class(MPI_Op op) {
  if (op == MPI_SUM) return OpClass::Sum;
  if (op == MPI_PROD) return OpClass::Prod;
  if (op == MPI_MAX || op == MPI_MIN) return OpClass::MinMax;
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return OpClass::Logical;
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return OpClass::Bitwise;
  if (op == MPI_MAXLOC || op == MPI_MINLOC) return OpClass::Loc;
  return OpClass::Replace;
}

template <class T>
T pick(Rng &r, std::initializer_list<T> list) {
  return list.begin()[r.below(list.size())];
}

// Little-endian store of the low `bytes` bytes (two's complement).
void store_int(unsigned char *dst, std::size_t bytes, long long v) {
  unsigned long long u = static_cast<unsigned long long>(v);
  for (std::size_t i = 0; i < bytes; ++i) dst[i] = static_cast<unsigned char>(u >> (8 * i));
}
long long load_int(const unsigned char *src, std::size_t bytes, bool is_signed) {
  unsigned long long u = 0;
  for (std::size_t i = 0; i < bytes; ++i) u |= static_cast<unsigned long long>(src[i]) << (8 * i);
  if (is_signed && bytes < 8 && (u >> (8 * bytes - 1)) & 1) u |= ~0ULL << (8 * bytes);
  return static_cast<long long>(u);
}

void store_float(unsigned char *dst, std::size_t bytes, long double v) {
  if (bytes == sizeof(float)) {
    float f = static_cast<float>(v);
    std::memcpy(dst, &f, sizeof f);
  } else if (bytes == sizeof(double)) {
    double d = static_cast<double>(v);
    std::memcpy(dst, &d, sizeof d);
  } else {
    std::memcpy(dst, &v, bytes);  // long double: significant bytes only
  }
}
long double load_float(const unsigned char *src, std::size_t bytes) {
  if (bytes == sizeof(float)) {
    float f;
    std::memcpy(&f, src, sizeof f);
    return f;
  }
  if (bytes == sizeof(double)) {
    double d;
    std::memcpy(&d, src, sizeof d);
    return d;
  }
  long double v = 0;
  std::memcpy(&v, src, bytes);
  return v;
}

// Integer value of a field for an op class. Ranges keep sums and products
// exact and free of signed overflow whatever the degree (see oracle.h).
long long int_value(Rng &r, bool is_signed, OpClass c, bool big, int field) {
  switch (c) {
    case OpClass::Sum: return is_signed ? r.range(-3, 3) : r.range(0, 3);
    case OpClass::Prod:
      if (is_signed) return big ? pick(r, {-2LL, -1LL, 1LL, 2LL}) : pick(r, {-1LL, 1LL});
      return big ? pick(r, {1LL, 2LL, 3LL}) : 1;
    case OpClass::MinMax: return is_signed ? r.range(-100, 100) : r.range(0, 200);
    case OpClass::Logical: return is_signed ? pick(r, {0LL, 0LL, 1LL, 2LL, -1LL}) : pick(r, {0LL, 0LL, 1LL, 2LL});
    case OpClass::Loc: return field == 0 ? r.range(0, 4) : r.range(0, 1000);  // ties likely
    default: return static_cast<long long>(r.next());  // all bits
  }
}

long double float_value(Rng &r, OpClass c, bool big, int field) {
  switch (c) {
    case OpClass::Sum: return r.range(-6, 6) / 2.0L;
    case OpClass::Prod: return big ? pick(r, {-2.0L, -1.0L, -0.5L, 0.5L, 1.0L, 2.0L}) : pick(r, {-1.0L, 1.0L});
    case OpClass::MinMax: return r.range(-400, 400) / 4.0L;
    case OpClass::Loc: return field == 0 ? r.range(0, 4) : r.range(0, 1000);
    default: return r.range(-1000000, 1000000) / 8.0L;
  }
}

std::complex<double> complex_value(Rng &r, OpClass c, bool big) {
  using C = std::complex<double>;
  switch (c) {
    case OpClass::Sum: return C(r.range(-3, 3), r.range(-3, 3));
    case OpClass::Prod:
      return big ? pick(r, {C(1, 1), C(2, 0), C(0, -1), C(1, -1)}) : pick(r, {C(1, 0), C(-1, 0), C(0, 1), C(0, -1)});
    default: return C(r.range(-1000000, 1000000) / 8.0, r.range(-1000000, 1000000) / 8.0);
  }
}

// A user-defined op (applied by the library through MPI_Reduce_local):
// inout = in + inout + 1, commutative so any reduction order gives one
// result; unsigned arithmetic so random values cannot overflow.
void plus_one(void *in, void *inout, int *len, MPI_Datatype *) {
  const int *a = static_cast<const int *>(in);
  int *b = static_cast<int *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = static_cast<int>(static_cast<unsigned>(a[i]) + static_cast<unsigned>(b[i]) + 1u);
}
MPI_Op user_plus_one = MPI_OP_NULL;

}  // namespace

std::vector<UnitSpec> make_arithmetic_units() {
  const std::vector<MPI_Op> ops = {MPI_REPLACE, MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  struct Builtin {
    const char *name;
    MPI_Datatype type;
    Kind kind;
    std::size_t bytes;
  };
  const Builtin all[] = {
      {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, Kind::SInt, 1},
      {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, Kind::UInt, 1},
      {"MPI_SHORT", MPI_SHORT, Kind::SInt, sizeof(short)},
      {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, Kind::UInt, sizeof(unsigned short)},
      {"MPI_INT", MPI_INT, Kind::SInt, sizeof(int)},
      {"MPI_UNSIGNED", MPI_UNSIGNED, Kind::UInt, sizeof(unsigned)},
      {"MPI_LONG", MPI_LONG, Kind::SInt, sizeof(long)},
      {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, Kind::UInt, sizeof(unsigned long)},
      {"MPI_LONG_LONG", MPI_LONG_LONG, Kind::SInt, sizeof(long long)},
      {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, Kind::UInt, sizeof(unsigned long long)},
      {"MPI_INT8_T", MPI_INT8_T, Kind::SInt, 1},
      {"MPI_INT16_T", MPI_INT16_T, Kind::SInt, 2},
      {"MPI_INT32_T", MPI_INT32_T, Kind::SInt, 4},
      {"MPI_INT64_T", MPI_INT64_T, Kind::SInt, 8},
      {"MPI_UINT8_T", MPI_UINT8_T, Kind::UInt, 1},
      {"MPI_UINT16_T", MPI_UINT16_T, Kind::UInt, 2},
      {"MPI_UINT32_T", MPI_UINT32_T, Kind::UInt, 4},
      {"MPI_UINT64_T", MPI_UINT64_T, Kind::UInt, 8},
      {"MPI_AINT", MPI_AINT, Kind::SInt, sizeof(MPI_Aint)},
      {"MPI_OFFSET", MPI_OFFSET, Kind::SInt, sizeof(MPI_Offset)},
      {"MPI_COUNT", MPI_COUNT, Kind::SInt, sizeof(MPI_Count)},
      {"MPI_FLOAT", MPI_FLOAT, Kind::Float, sizeof(float)},
      {"MPI_DOUBLE", MPI_DOUBLE, Kind::Float, sizeof(double)},
  };
  std::vector<UnitSpec> v;
  for (const Builtin &b : all) v.push_back(builtin(b.name, b.type, b.kind, b.bytes, ops, {MPI_SUM}));
  return v;
}

std::vector<UnitSpec> make_units() {
  // Every integer op of MPI on int, every float op on double.
  const std::vector<MPI_Op> int_ops = {MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN, MPI_REPLACE, MPI_LAND,
                                       MPI_LOR,  MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  const std::vector<MPI_Op> dbl_ops = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_REPLACE};
  std::vector<UnitSpec> v;
  if (user_plus_one == MPI_OP_NULL) MPI_Op_create(plus_one, 1, &user_plus_one);
  std::vector<MPI_Op> int_all = int_ops;
  int_all.push_back(user_plus_one);
  v.push_back(builtin("MPI_INT", MPI_INT, Kind::SInt, sizeof(int), int_all, int_all,
                      {{MPI_MAXLOC, STF_ERR_OP}}));
  v.back().core = true;
  v.push_back(builtin("MPI_DOUBLE", MPI_DOUBLE, Kind::Float, sizeof(double), dbl_ops, dbl_ops,
                      {{MPI_BAND, STF_ERR_OP}, {MPI_LXOR, STF_ERR_OP}}));
  v.back().core = true;
  v.push_back(builtin("MPI_CHAR", MPI_CHAR, Kind::Char, 1, {MPI_REPLACE}, {MPI_REPLACE},
                      {{MPI_SUM, STF_ERR_OP}}));
  v.push_back(builtin("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, Kind::SInt, 1,
                      {MPI_SUM, MPI_MAX, MPI_BXOR, MPI_REPLACE}, {MPI_SUM}));
  v.push_back(builtin("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, Kind::UInt, 1,
                      {MPI_PROD, MPI_MIN, MPI_BOR}, {MPI_PROD}));
  v.push_back(builtin("MPI_SHORT", MPI_SHORT, Kind::SInt, sizeof(short),
                      {MPI_SUM, MPI_LAND, MPI_MIN}, {MPI_MIN}));
  v.push_back(builtin("MPI_UNSIGNED", MPI_UNSIGNED, Kind::UInt, sizeof(unsigned),
                      {MPI_PROD, MPI_BAND, MPI_MAX}, {MPI_BAND}));
  v.push_back(builtin("MPI_LONG", MPI_LONG, Kind::SInt, sizeof(long),
                      {MPI_SUM, MPI_MIN, MPI_LOR}, {MPI_LOR}));
  v.push_back(builtin("MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, Kind::UInt,
                      sizeof(unsigned long long), {MPI_SUM, MPI_PROD, MPI_BXOR, MPI_MAX},
                      {MPI_PROD}));
  v.push_back(builtin("MPI_INT8_T", MPI_INT8_T, Kind::SInt, 1, {MPI_SUM, MPI_MIN, MPI_LXOR},
                      {MPI_LXOR}));
  v.push_back(builtin("MPI_UINT16_T", MPI_UINT16_T, Kind::UInt, 2, {MPI_SUM, MPI_BAND, MPI_MAX},
                      {MPI_SUM}));
  v.push_back(builtin("MPI_INT64_T", MPI_INT64_T, Kind::SInt, 8, {MPI_SUM, MPI_PROD, MPI_MAX},
                      {MPI_MAX}));
  v.push_back(builtin("MPI_FLOAT", MPI_FLOAT, Kind::Float, sizeof(float),
                      {MPI_SUM, MPI_PROD, MPI_MIN}, {MPI_SUM}));
  v.push_back(builtin("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, Kind::Float, kLongDoubleBytes,
                      {MPI_SUM, MPI_MAX, MPI_REPLACE}, {MPI_SUM}));
  v.push_back(builtin("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, Kind::Complex,
                      2 * sizeof(double), {MPI_SUM, MPI_PROD, MPI_REPLACE}, {MPI_PROD},
                      {{MPI_MAX, STF_ERR_OP}}));
  v.push_back(builtin("MPI_C_BOOL", MPI_C_BOOL, Kind::Bool, 1,
                      {MPI_LAND, MPI_LOR, MPI_LXOR, MPI_REPLACE}, {MPI_LXOR}));
  v.push_back(builtin("MPI_BYTE", MPI_BYTE, Kind::Byte, 1,
                      {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE}, {MPI_BXOR},
                      {{MPI_SUM, STF_ERR_OP}}));

  // Pair types: value then index, as MPI lays them out.
  struct DI {
    double v;
    int i;
  };
  UnitSpec di = builtin("MPI_DOUBLE_INT", MPI_DOUBLE_INT, Kind::Float, sizeof(double),
                        {MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE}, {MPI_MAXLOC}, {{MPI_SUM, STF_ERR_OP}});
  di.fields.push_back({offsetof(DI, i), Kind::SInt, sizeof(int)});
  v.push_back(di);
  UnitSpec ii = builtin("MPI_2INT", MPI_2INT, Kind::SInt, sizeof(int), {MPI_MAXLOC, MPI_MINLOC},
                        {MPI_MINLOC});
  ii.fields.push_back({sizeof(int), Kind::SInt, sizeof(int)});
  v.push_back(ii);

  // Contiguous derived type of one builtin: every op of the builtin works.
  UnitSpec c3;
  c3.name = "contiguous(3,MPI_DOUBLE)";
  MPI_Type_contiguous(3, MPI_DOUBLE, &c3.type);
  MPI_Type_commit(&c3.type);
  c3.derived = true;
  c3.oracle_type = MPI_DOUBLE;
  c3.oracle_count = 3;
  c3.extent = 3 * sizeof(double);
  for (int k = 0; k < 3; ++k) c3.fields.push_back({k * sizeof(double), Kind::Float, sizeof(double)});
  c3.ops = {MPI_SUM, MPI_MAX, MPI_REPLACE};
  c3.fetch = {MPI_SUM};
  c3.bad = {{MPI_BAND, STF_ERR_OP}};
  v.push_back(c3);

  // Non-contiguous: ints 0 and 2 of every 3 (extent 3 ints); the middle int
  // is a gap that must never be written. Only MPI_REPLACE is supported.
  UnitSpec vec;
  vec.name = "vector(2,1,2,MPI_INT)";
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec.type);
  MPI_Type_commit(&vec.type);
  vec.derived = true;
  MPI_Aint lb, extent;
  MPI_Type_get_extent(vec.type, &lb, &extent);
  vec.extent = static_cast<std::size_t>(extent);
  vec.fields = {{0, Kind::SInt, sizeof(int)}, {2 * sizeof(int), Kind::SInt, sizeof(int)}};
  vec.gaps = {{sizeof(int), sizeof(int)}};
  vec.ops = {MPI_REPLACE};
  vec.fetch = {MPI_REPLACE};
  vec.bad = {{MPI_SUM, STF_ERR_TYPE}};
  v.push_back(vec);

  // A struct {int; double}: two base types, 4 padding bytes between them
  // that the type does not cover (must stay untouched). MPI_REPLACE only.
  struct ID {
    int i;
    double d;
  };
  UnitSpec st;
  st.name = "struct{int,double}";
  int blocklens[2] = {1, 1};
  MPI_Aint displs[2] = {offsetof(ID, i), offsetof(ID, d)};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, blocklens, displs, types, &st.type);
  MPI_Type_commit(&st.type);
  st.derived = true;
  st.extent = sizeof(ID);
  st.fields = {{offsetof(ID, i), Kind::SInt, sizeof(int)}, {offsetof(ID, d), Kind::Float, sizeof(double)}};
  st.gaps = {{sizeof(int), offsetof(ID, d) - sizeof(int)}};
  st.ops = {MPI_REPLACE};
  st.fetch = {MPI_REPLACE};
  st.bad = {{MPI_SUM, STF_ERR_TYPE}};
  v.push_back(st);

  // One int per 16 bytes (resized extent): units are not adjacent, and the
  // 12 bytes after each int belong to no unit.
  UnitSpec rs;
  rs.name = "resized(MPI_INT,extent 16)";
  MPI_Type_create_resized(MPI_INT, 0, 16, &rs.type);
  MPI_Type_commit(&rs.type);
  rs.derived = true;
  rs.extent = 16;
  rs.fields = {{0, Kind::SInt, sizeof(int)}};
  rs.gaps = {{sizeof(int), 16 - sizeof(int)}};
  rs.ops = {MPI_REPLACE};
  rs.fetch = {MPI_REPLACE};
  v.push_back(rs);
  return v;
}

void free_units(std::vector<UnitSpec> &units) {
  for (auto &u : units)
    if (u.derived) MPI_Type_free(&u.type);
  units.clear();
  if (user_plus_one != MPI_OP_NULL) MPI_Op_free(&user_plus_one);
}

const char *op_name(MPI_Op op) {
  static const std::pair<MPI_Op, const char *> names[] = {
      {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},     {MPI_MAX, "MPI_MAX"},
      {MPI_MIN, "MPI_MIN"},       {MPI_REPLACE, "MPI_REPLACE"}, {MPI_LAND, "MPI_LAND"},
      {MPI_LOR, "MPI_LOR"},       {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},
      {MPI_BOR, "MPI_BOR"},       {MPI_BXOR, "MPI_BXOR"},     {MPI_MAXLOC, "MPI_MAXLOC"},
      {MPI_MINLOC, "MPI_MINLOC"}, {MPI_OP_NULL, "MPI_OP_NULL"}};
  for (auto &n : names)
    if (n.first == op) return n.second;
  return op == user_plus_one ? "user-op(a+b+1)" : "user-op";
}

void gen_unit(const UnitSpec &u, MPI_Op op, std::uint64_t key, bool big, void *dst) {
  const OpClass c = op_class(op);
  unsigned char *d = static_cast<unsigned char *>(dst);
  for (std::size_t f = 0; f < u.fields.size(); ++f) {
    const Field &fd = u.fields[f];
    Rng r(hash_key(key, f));
    unsigned char *p = d + fd.offset;
    const int fi = static_cast<int>(f);
    switch (fd.kind) {
      case Kind::SInt: store_int(p, fd.bytes, int_value(r, true, c, big, fi)); break;
      case Kind::UInt: store_int(p, fd.bytes, int_value(r, false, c, big, fi)); break;
      case Kind::Float: store_float(p, fd.bytes, float_value(r, c, big, fi)); break;
      case Kind::Complex: {
        std::complex<double> z = complex_value(r, c, big);
        double parts[2] = {z.real(), z.imag()};
        std::memcpy(p, parts, sizeof parts);
        break;
      }
      case Kind::Bool: *p = static_cast<unsigned char>(r.below(2)); break;
      case Kind::Byte:
      case Kind::Char: *p = static_cast<unsigned char>(r.next()); break;
    }
  }
}

void copy_unit(const UnitSpec &u, void *dst, const void *src) {
  for (const Field &f : u.fields)
    std::memcpy(static_cast<unsigned char *>(dst) + f.offset,
                static_cast<const unsigned char *>(src) + f.offset, f.bytes);
}

namespace {

bool is_builtin(MPI_Op op) {
  for (MPI_Op b : {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR,
                   MPI_MAXLOC, MPI_MINLOC})
    if (op == b) return true;
  return false;
}

// inout = inout op in for one integer, boolean or byte field, in 64 bits
// and stored back modulo its width (values are chosen so that nothing
// overflows; see int_value).
void integer_op(const Field &f, MPI_Op op, unsigned char *io, const unsigned char *in) {
  const bool is_signed = f.kind == Kind::SInt;
  const long long a = load_int(io, f.bytes, is_signed), b = load_int(in, f.bytes, is_signed);
  const unsigned long long ua = static_cast<unsigned long long>(a), ub = static_cast<unsigned long long>(b);
  const bool less = is_signed ? a < b : ua < ub;  // a < b in the field's own order
  unsigned long long r = ua;
  if (op == MPI_SUM) r = ua + ub;
  else if (op == MPI_PROD) r = ua * ub;
  else if (op == MPI_MAX) r = less ? ub : ua;
  else if (op == MPI_MIN) r = less ? ua : ub;
  else if (op == MPI_LAND) r = a != 0 && b != 0;
  else if (op == MPI_LOR) r = a != 0 || b != 0;
  else if (op == MPI_LXOR) r = (a != 0) != (b != 0);
  else if (op == MPI_BAND) r = ua & ub;
  else if (op == MPI_BOR) r = ua | ub;
  else if (op == MPI_BXOR) r = ua ^ ub;
  store_int(io, f.bytes, static_cast<long long>(r));
}

void float_op(const Field &f, MPI_Op op, unsigned char *io, const unsigned char *in) {
  const long double a = load_float(io, f.bytes), b = load_float(in, f.bytes);
  long double r = a;
  if (op == MPI_SUM) r = a + b;
  else if (op == MPI_PROD) r = a * b;
  else if (op == MPI_MAX) r = a < b ? b : a;
  else if (op == MPI_MIN) r = b < a ? b : a;
  store_float(io, f.bytes, r);
}

void complex_op(MPI_Op op, unsigned char *io, const unsigned char *in) {
  double x[2], y[2];
  std::memcpy(x, io, sizeof x);
  std::memcpy(y, in, sizeof y);
  std::complex<double> a(x[0], x[1]), b(y[0], y[1]);
  const std::complex<double> r = op == MPI_PROD ? a * b : a + b;
  const double parts[2] = {r.real(), r.imag()};
  std::memcpy(io, parts, sizeof parts);
}

double field_value(const Field &f, const unsigned char *p) {
  return f.kind == Kind::Float ? static_cast<double>(load_float(p, f.bytes))
                               : static_cast<double>(load_int(p, f.bytes, f.kind == Kind::SInt));
}

// MAXLOC / MINLOC on (value, index): the better value, the lower index on ties.
void loc_op(const UnitSpec &u, MPI_Op op, unsigned char *io, const unsigned char *in) {
  const Field &v = u.fields[0], &i = u.fields[1];
  const double a = field_value(v, io + v.offset), b = field_value(v, in + v.offset);
  const long long ia = load_int(io + i.offset, i.bytes, true), ib = load_int(in + i.offset, i.bytes, true);
  const bool take = op == MPI_MAXLOC ? b > a : b < a;
  if (take) copy_unit(u, io, in);
  else if (a == b && ib < ia) store_int(io + i.offset, i.bytes, ib);
}

}  // namespace

// The builtin ops are computed here, field by field, not by MPI_Reduce_local:
// the oracle must not share a bug with the MPI under test (MPICH 4.0.2
// computes MIN and MAX of unsigned types as signed). All builtin ops
// commute, so "inout op in" is also MPI's "in op inout". User-defined ops
// are the tests' own code and run through MPI_Reduce_local.
void apply_op(const UnitSpec &u, MPI_Op op, void *inout, const void *in) {
  if (op == MPI_REPLACE) {
    copy_unit(u, inout, in);
    return;
  }
  unsigned char *io = static_cast<unsigned char *>(inout);
  const unsigned char *src = static_cast<const unsigned char *>(in);
  if (!is_builtin(op)) {
    MPI_Reduce_local(in, inout, u.oracle_count, u.oracle_type, op);
    return;
  }
  if (op == MPI_MAXLOC || op == MPI_MINLOC) return loc_op(u, op, io, src);
  for (const Field &f : u.fields) {
    if (f.kind == Kind::Float) float_op(f, op, io + f.offset, src + f.offset);
    else if (f.kind == Kind::Complex) complex_op(op, io + f.offset, src + f.offset);
    else integer_op(f, op, io + f.offset, src + f.offset);
  }
}

bool unit_equal(const UnitSpec &u, const void *a, const void *b) {
  const unsigned char *pa = static_cast<const unsigned char *>(a);
  const unsigned char *pb = static_cast<const unsigned char *>(b);
  for (const Field &f : u.fields) {
    // Floating point compares by value: the sign of a zero product depends
    // on the (unspecified) order of a reduction. No NaN is ever generated.
    if (f.kind == Kind::Float) {
      if (load_float(pa + f.offset, f.bytes) != load_float(pb + f.offset, f.bytes)) return false;
    } else if (f.kind == Kind::Complex) {
      double x[2], y[2];
      std::memcpy(x, pa + f.offset, sizeof x);
      std::memcpy(y, pb + f.offset, sizeof y);
      if (x[0] != y[0] || x[1] != y[1]) return false;
    } else if (std::memcmp(pa + f.offset, pb + f.offset, f.bytes) != 0) {
      return false;
    }
  }
  for (const auto &g : u.gaps)
    if (std::memcmp(pa + g.first, pb + g.first, g.second) != 0) return false;
  return true;
}

std::string format_unit(const UnitSpec &u, const void *ptr) {
  const unsigned char *p = static_cast<const unsigned char *>(ptr);
  std::string s = "{";
  char buf[96];
  for (std::size_t f = 0; f < u.fields.size(); ++f) {
    const Field &fd = u.fields[f];
    const unsigned char *q = p + fd.offset;
    switch (fd.kind) {
      case Kind::SInt: std::snprintf(buf, sizeof buf, "%lld", load_int(q, fd.bytes, true)); break;
      case Kind::UInt: std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(load_int(q, fd.bytes, false))); break;
      case Kind::Float: std::snprintf(buf, sizeof buf, "%.17Lg", load_float(q, fd.bytes)); break;
      case Kind::Complex: {
        double parts[2];
        std::memcpy(parts, q, sizeof parts);
        std::snprintf(buf, sizeof buf, "(%.17g,%.17g)", parts[0], parts[1]);
        break;
      }
      default: std::snprintf(buf, sizeof buf, "0x%02x", *q); break;
    }
    if (f) s += ",";
    s += buf;
  }
  for (const auto &g : u.gaps) {
    s += " gap:";
    for (std::size_t i = 0; i < g.second; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", p[g.first + i]);
      s += buf;
    }
  }
  return s + "}";
}

}  // namespace stft
