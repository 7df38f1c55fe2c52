#include "arrays.h"

namespace stfpy {
using namespace nb::literals;

nb::object numpy() {
  static nb::object np = nb::module_::import_("numpy");
  return np;
}

nb::object contiguous(nb::handle obj, const char *dtype) {
  return numpy().attr("ascontiguousarray")(obj, "dtype"_a = dtype);
}

IntArray ints(nb::handle obj, const char *what) {
  IntArray a;
  a.array = contiguous(obj, "intc");
  if (nb::cast<int>(a.array.attr("ndim")) != 1)
    throw nb::value_error((std::string(what) + ": expected a 1-D array of integers").c_str());
  a.size = nb::cast<stf_int>(a.array.attr("size"));
  a.data = data_of<stf_int>(a.array);
  return a;
}

}  // namespace stfpy
