// numpy helpers for the arrays the binding makes or reads itself (graphs,
// index lists, results), off the operations' path.
#pragma once

#include <cstdint>

#include "common.h"

namespace stfpy {

// The numpy module.
nb::object numpy();
// np.ascontiguousarray(obj, dtype): obj itself when it already is one.
nb::object contiguous(nb::handle obj, const char *dtype);

// The data of a numpy array.
template <class T>
T *data_of(nb::handle array) {
  return reinterpret_cast<T *>(nb::cast<uintptr_t>(array.attr("ctypes").attr("data")));
}

// A 1-D C-contiguous array of T made from obj (what names it in errors).
template <class T>
struct Array {
  nb::object array;
  stf_int size = 0;
  const T *data = nullptr;
};
using IntArray = Array<stf_int>;
using GlobalArray = Array<stf_gint>;
IntArray ints(nb::handle obj, const char *what);  // C ints: local counts, offsets, ranks
// 64-bit global ids (stf_gint); an array of floats is a TypeError, not
// truncated.
GlobalArray global_ids(nb::handle obj, const char *what);

}  // namespace stfpy
