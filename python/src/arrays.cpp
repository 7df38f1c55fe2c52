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

namespace {

template <class T>
Array<T> one_d(nb::object array, const char *what) {
  Array<T> a;
  a.array = std::move(array);
  if (nb::cast<int>(a.array.attr("ndim")) != 1)
    throw nb::value_error((std::string(what) + ": expected a 1-D array of integers").c_str());
  a.size = nb::cast<stf_int>(a.array.attr("size"));
  a.data = data_of<T>(a.array);
  return a;
}

}  // namespace

IntArray ints(nb::handle obj, const char *what) { return one_d<stf_int>(contiguous(obj, "intc"), what); }

GlobalArray global_ids(nb::handle obj, const char *what) {
  nb::object np = numpy();
  nb::object given = np.attr("asarray")(obj);
  if (nb::cast<long long>(given.attr("size")) > 0 &&
      !nb::cast<bool>(np.attr("can_cast")(given.attr("dtype"), np.attr("int64"), "casting"_a = "same_kind")))
    throw nb::type_error((std::string(what) + ": expected integer global ids").c_str());
  return one_d<stf_gint>(contiguous(given, "int64"), what);
}

}  // namespace stfpy
