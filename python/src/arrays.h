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

// A 1-D C-contiguous array of C ints made from obj (what names it in errors).
struct IntArray {
  nb::object array;
  stf_int size = 0;
  const stf_int *data = nullptr;
};
IntArray ints(nb::handle obj, const char *what);

}  // namespace stfpy
