// The kernel tests' shorthands: a datatype's decoded unit (the decoding
// must succeed), and a derived datatype committed in one expression.
#pragma once

#include <gtest/gtest.h>

#include "kernels/kernels.h"

namespace stf {

inline const Unit *decode(MPI_Datatype t) {
  const Unit *u = nullptr;
  EXPECT_EQ(decode_unit(t, &u), STF_SUCCESS) << stf_last_error_message();
  return u;
}
inline MPI_Datatype committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

}  // namespace stf
