// Kernel layer: how a datatype decodes into a unit (kernels/unit.cpp):
// builtin types, aliases, dense and opaque derived types, the per-type
// cache, and the errors.
#include <gtest/gtest.h>

#include <complex>
#include <cstddef>
#include <string>

#include "decoded.h"
#include "kernels/kernels.h"
#include "kernels/ops.h"

namespace stf {
namespace {

TEST(DecodeUnit, EveryBuiltin) {
#define CHECK_BUILTIN(name, ctype, handle, kind)        \
  {                                                     \
    SCOPED_TRACE(#handle);                              \
    const Unit *u = decode(handle);                     \
    ASSERT_NE(u, nullptr);                              \
    EXPECT_EQ(u->type, handle);                         \
    EXPECT_EQ(u->base, kBase_##name);                   \
    EXPECT_EQ(u->count, 1);                             \
    EXPECT_EQ(u->extent, sizeof(ctype));                \
    EXPECT_EQ(u->packed_bytes, sizeof(ctype));          \
  }
  STF_BASE_TYPES(CHECK_BUILTIN)
#undef CHECK_BUILTIN
  // Aliases decode like the type they alias.
  EXPECT_EQ(decode(MPI_LONG_LONG_INT)->base, kBase_LONG_LONG);
  EXPECT_EQ(decode(MPI_C_COMPLEX)->base, kBase_C_FLOAT_COMPLEX);
}

TEST(DecodeUnit, OtherNamedTypesAreOpaque) {
  for (MPI_Datatype t : {MPI_PACKED, MPI_CXX_BOOL, MPI_CXX_DOUBLE_COMPLEX, MPI_INTEGER, MPI_REAL8}) {
    int size = 0;
    MPI_Type_size(t, &size);
    const Unit *u = nullptr;
    if (size == 0) {
      EXPECT_EQ(decode_unit(t, &u), STF_ERR_TYPE);
      continue;
    }
    ASSERT_EQ(decode_unit(t, &u), STF_SUCCESS) << stf_last_error_message();
    EXPECT_TRUE(u->opaque());
    EXPECT_GE(u->packed_bytes, static_cast<std::size_t>(size));
    const Unit *again = nullptr;
    ASSERT_EQ(decode_unit(t, &again), STF_SUCCESS);
    EXPECT_EQ(u, again);
  }
}

TEST(DecodeUnit, DenseDerivedTypes) {
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_DOUBLE, &t);
  t = committed(t);
  const Unit *u = decode(t);
  EXPECT_EQ(u->base, decode(MPI_DOUBLE)->base);
  EXPECT_EQ(u->count, 3);
  EXPECT_EQ(u->extent, 24u);
  EXPECT_EQ(u->packed_bytes, 24u);
  MPI_Type_free(&t);

  // Pairs have trailing padding: true extent < extent. Still an array of pairs.
  MPI_Type_contiguous(4, MPI_DOUBLE_INT, &t);
  t = committed(t);
  u = decode(t);
  EXPECT_EQ(u->base, kBase_DOUBLE_INT);
  EXPECT_EQ(u->count, 4);
  MPI_Type_free(&t);

  // A vector without gaps is dense too; nested derived types are walked.
  MPI_Datatype inner;
  MPI_Type_contiguous(2, MPI_INT, &inner);
  MPI_Type_vector(3, 1, 1, inner, &t);
  t = committed(t);
  u = decode(t);
  EXPECT_EQ(u->base, kBase_INT);
  EXPECT_EQ(u->count, 6);
  MPI_Type_free(&t);
  MPI_Type_free(&inner);

  // A duplicate of a builtin is a derived type with the builtin's kernels.
  MPI_Type_dup(MPI_UNSIGNED_SHORT, &t);
  u = decode(t);
  EXPECT_EQ(u->base, kBase_UNSIGNED_SHORT);
  EXPECT_EQ(u->count, 1);
  MPI_Type_free(&t);
}

TEST(DecodeUnit, OpaqueDerivedTypes) {
  MPI_Datatype vec, st, rs, perm, overlap;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);  // gaps between the ints
  vec = committed(vec);
  int blocks[2] = {1, 1};
  MPI_Aint displs[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, blocks, displs, types, &st);
  st = committed(st);
  MPI_Type_create_resized(MPI_INT, 0, 8, &rs);
  rs = committed(rs);
  int pd[2] = {1, 0};  // right sizes and bounds, but permuted
  MPI_Type_create_indexed_block(2, 1, pd, MPI_INT, &perm);
  perm = committed(perm);
  int od[3] = {0, 0, 2};  // overlapping element and a hole
  MPI_Type_create_indexed_block(3, 1, od, MPI_INT, &overlap);
  overlap = committed(overlap);

  const Unit *u = decode(vec);
  EXPECT_TRUE(u->opaque());
  EXPECT_EQ(u->extent, 20u);
  int packed = 0;
  MPI_Pack_size(1, vec, MPI_COMM_SELF, &packed);
  EXPECT_EQ(u->packed_bytes, static_cast<std::size_t>(packed));
  EXPECT_TRUE(decode(st)->opaque());
  EXPECT_TRUE(decode(rs)->opaque());
  EXPECT_EQ(decode(rs)->extent, 8u);
  EXPECT_TRUE(decode(perm)->opaque());
  EXPECT_TRUE(decode(overlap)->opaque());
  for (MPI_Datatype *t : {&vec, &st, &rs, &perm, &overlap}) MPI_Type_free(t);
}

TEST(DecodeUnit, CachedPerType) {
  MPI_Datatype t;
  MPI_Type_contiguous(3, MPI_FLOAT, &t);
  t = committed(t);
  const Unit *a = decode(t), *b = decode(t);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->count, 3);
  MPI_Type_free(&t);
  // The handle may well be reused; the new type must not see the old Unit.
  for (int n = 5; n < 8; ++n) {
    MPI_Type_contiguous(n, MPI_SHORT, &t);
    t = committed(t);
    const Unit *c = decode(t);
    EXPECT_EQ(c->base, kBase_SHORT);
    EXPECT_EQ(c->count, n);
    EXPECT_EQ(c->extent, n * sizeof(short));
    MPI_Type_free(&t);
  }
  // Builtins come from the table: stable pointers.
  EXPECT_EQ(decode(MPI_INT), decode(MPI_INT));
}

TEST(DecodeUnit, Errors) {
  const Unit *u = nullptr;
  EXPECT_EQ(decode_unit(MPI_DATATYPE_NULL, &u), STF_ERR_TYPE);
  EXPECT_NE(std::string(stf_last_error_message()).find("MPI_DATATYPE_NULL"), std::string::npos);
  EXPECT_EQ(decode_unit(MPI_INT, nullptr), STF_ERR_NULL);

  MPI_Datatype zero, neg, uncommitted;
  MPI_Type_contiguous(0, MPI_INT, &zero);
  zero = committed(zero);
  EXPECT_EQ(decode_unit(zero, &u), STF_ERR_TYPE);
  MPI_Type_create_resized(MPI_INT, -4, 8, &neg);
  neg = committed(neg);
  EXPECT_EQ(decode_unit(neg, &u), STF_ERR_TYPE);
  // Open MPI reports an uncommitted type; other MPIs may decode it. Either way no crash.
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  int rc = decode_unit(uncommitted, &u);
  EXPECT_TRUE(rc == STF_SUCCESS || rc == STF_ERR_TYPE);
  for (MPI_Datatype *t : {&zero, &neg, &uncommitted}) MPI_Type_free(t);
}

}  // namespace
}  // namespace stf
